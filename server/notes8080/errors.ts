import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
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

/**
 * Gives every failure the service's `{error: string}` shape: thrown errors, and the routing
 * answers that carry no body (unknown path 404, wrong method 405 with its `Allow` header).
 * Only 500s are logged, once each, with the error.
 */
export function handleErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { status, message, headers = {} } = toResponse(error);
      if (status >= 500) logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.set(headers);
      ctx.status = status;
      ctx.body = { error: message };
      return;
    }
    if (ctx.status >= 400 && ctx.body == null) {
      // Setting the status explicitly first keeps Koa from turning it into 200 with the body.
      ctx.status = ctx.status;
      ctx.body = { error: STATUS_CODES[ctx.status] ?? 'Error' };
    }
  };
}
