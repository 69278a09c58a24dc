import type { Middleware } from 'koa';
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level });
}

/** One structured line per request: method, path, status and duration in milliseconds. */
export function requestLogger(logger: Logger): Middleware {
  // The level is fixed at start-up: with request lines off, skip the timing and the object too.
  if (!logger.isLevelEnabled('info')) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.info({
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
    }
  };
}
