import type { Middleware } from 'koa';
import type { Logger } from '../shared/logger.js';
import { HttpError, MalformedJsonError } from '../shared/errors.js';
import { InvalidBodyError } from '../shared/validate.js';
import { messages } from './messages.js';

interface ErrorAnswer {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** Turns every failure into `{error}` with its status; only real 500s are logged. */
export function handleErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { status, message, headers = {} } = answerFor(error);
      if (status >= 500) logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = status;
      ctx.set(headers);
      ctx.body = { error: message };
    }
  };
}

function answerFor(error: unknown): ErrorAnswer {
  if (error instanceof InvalidBodyError || error instanceof MalformedJsonError) {
    return { status: 400, message: messages.invalidLoginBody };
  }
  if (error instanceof HttpError) {
    // The shared body reader words its 413 in English; this service answers in its own words.
    if (error.status === 413) return { status: 413, message: messages.bodyTooLarge };
    return { status: error.status, message: error.message, headers: error.headers };
  }
  // Koa's and koa-send's own client errors (a malformed path, for instance).
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500 && expose && typeof message === 'string') {
    return { status, message };
  }
  return { status: 500, message: messages.internalError };
}
