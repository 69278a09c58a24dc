import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { Logger } from './logger.js';

/** What a service answers for a failure: its status, its body in the service's shape, headers. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * The one error middleware of a service: `answerFor` words every thrown failure in the
 * service's own shape; only real 500s are logged, once each, with the error.
 */
export function handleErrors(logger: Logger, answerFor: (error: unknown) => ErrorAnswer): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const answer = answerFor(error);
      if (answer.status >= 500) logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = answer.status;
      ctx.set(answer.headers ?? {});
      ctx.body = answer.body;
    }
  };
}

/**
 * Failures after the answer has started (a streamed list cut short by the database) cannot reach
 * the error middleware; Koa reports them as the app's `error` event, where they are logged like
 * any 500. A client that goes away mid-answer is not a failure of the service.
 */
export function logFailuresAfterAnswer(app: Koa, logger: Logger): void {
  // Koa reports a failing body stream twice (its error event, then the pipe's end): log it once.
  const logged = new WeakSet<object>();
  app.on('error', (error: { code?: string }, ctx?: { method: string; path: string }) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.code === 'ECONNRESET' || logged.has(error)) return;
    logged.add(error);
    logger.error({ err: error, method: ctx?.method, path: ctx?.path }, 'answer cut short');
  });
}
