import { handleErrors, type ErrorAnswer } from '../shared/errorMiddleware.js';
import { HttpError, MalformedJsonError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { InvalidBodyError } from '../shared/validate.js';
import { messages } from './messages.js';

interface Failure {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** Turns every failure into `{error}` with its status; only real 500s are logged. */
export const handleAuthErrors = (logger: Logger) =>
  handleErrors(logger, (error): ErrorAnswer => {
    const { status, message, headers } = failureOf(error);
    return { status, body: { error: message }, headers };
  });

function failureOf(error: unknown): Failure {
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
