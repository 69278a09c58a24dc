import { createRequire } from 'node:module';
import type { Middleware } from 'koa';
import { pino, type Logger, type LoggerOptions } from 'pino';
import type pinoPretty from 'pino-pretty';

export type { Logger };

/**
 * Fields added to every line, from what is going on when it is written (the trace a line belongs
 * to, say).
 */
export type LineFields = () => Record<string, unknown>;

/**
 * The process's logger: readable lines for a person at a terminal (pino-pretty, in this thread
 * rather than a worker: lines stay in order with what else the process prints), one JSON object
 * per line for everything else. `format` overrides the choice.
 */
export function createLogger(
  level: string,
  format: 'pretty' | 'json' = process.stdout.isTTY ? 'pretty' : 'json',
  fields?: LineFields,
): Logger {
  if (format === 'json') return pino(loggerOptions(level, fields));
  // Loaded only for a terminal: it takes a while to load.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;
  return pino(
    loggerOptions(level, fields),
    pretty({
      colorize: process.stdout.isTTY,
      translateTime: 'SYS:HH:MM:ss.l',
      singleLine: true,
      // A request line reads as one: `[notes8080] GET /notes/1 → 200 (1.2 ms)`.
      messageFormat:
        '{if service}[{service}] {end}{msg}{if method}{method} {path} → {status} ({ms} ms){end}',
      ignore: 'pid,hostname,service,method,path,status,ms',
    }),
  );
}

/**
 * What every logger of the project logs with. Logs never hold secrets: an error is logged as its
 * type, message, code and stack only (a parser's error can carry the raw request or body,
 * cookies included), and cookie or authorization headers are redacted wherever they appear.
 */
export function loggerOptions(level: string, fields?: LineFields): LoggerOptions {
  return {
    level,
    ...(fields && { mixin: fields }),
    serializers: { err: (error: unknown) => safeError(error) },
    redact: {
      paths: ['*.headers.cookie', '*.headers.authorization', '*.headers["set-cookie"]'],
      censor: '[redacted]',
    },
  };
}

function safeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { code } = error as { code?: unknown };
  return {
    type: error.name,
    message: error.message,
    ...(code !== undefined && { code }),
    stack: error.stack,
  };
}

/**
 * Longest path a log line repeats: a client's path must not make the log grow faster than its
 * requests.
 */
const LOGGED_PATH_CHARS = 160;

/** The path as log lines show it: cut at LOGGED_PATH_CHARS (marked with …). */
export const loggedPath = (path: string) =>
  path.length > LOGGED_PATH_CHARS ? `${path.slice(0, LOGGED_PATH_CHARS)}…` : path;

/**
 * One short structured line per request, written once it is answered: its id, method, path,
 * status, duration in milliseconds, the client's address (as the trusted proxies report it) and
 * the signed-in user's id when there is one. With request lines off (the level is fixed at
 * start-up), no step is spent on them.
 */
export function requestLog(logger: Logger): Middleware {
  if (!logger.isLevelEnabled('info')) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.info({
        reqId: ctx.state.requestId,
        method: ctx.method,
        path: loggedPath(ctx.path),
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        address: ctx.ip,
        ...(ctx.state.userId !== undefined && { userId: ctx.state.userId }),
      });
    }
  };
}
