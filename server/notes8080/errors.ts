import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
import { handleErrors, type ErrorAnswer } from '../shared/errorMiddleware.js';
import { HttpError, MalformedJsonError, describeServerError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { InvalidBodyError } from '../shared/validate.js';
import { messages } from './messages.js';

interface ErrorResponse {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

function toResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) {
    return { status: error.status, message: error.message, headers: error.headers };
  }
  if (error instanceof MalformedJsonError) {
    return { status: 400, message: messages.malformedJson(error.position, error.reason) };
  }
  if (error instanceof InvalidBodyError) {
    if (error.body.kind === 'other') {
      return { status: 415, message: messages.bodyNotJson(error.body.contentType) };
    }
    return { status: 400, message: error.validation?.errors.join('; ') ?? error.message };
  }
  return { status: 500, message: describeServerError(error) };
}

/** Gives every thrown failure the service's `{error: string}` shape; only 500s are logged. */
export const handleNotesErrors = (logger: Logger) =>
  handleErrors(logger, (error): ErrorAnswer => {
    const { status, message, headers } = toResponse(error);
    return { status, body: { error: message }, headers };
  });

/** The routing answers that carry no body (unknown path 404, wrong method 405) get one too. */
export const bodiesForRoutingErrors: Middleware = async (ctx, next) => {
  await next();
  if (ctx.status >= 400 && ctx.body == null) {
    // Setting the status explicitly first keeps Koa from turning it into 200 with the body.
    ctx.status = ctx.status;
    ctx.body = { error: STATUS_CODES[ctx.status] ?? 'Error' };
  }
};
