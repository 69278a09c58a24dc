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
