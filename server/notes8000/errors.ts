import { handleErrors, type ErrorAnswer } from '../shared/errorMiddleware.js';
import { describeServerError, HttpError, MalformedJsonError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { malformedJsonEntry, RequestValidationError } from './validationErrors.js';

interface ErrorResponse {
  status: number;
  detail: unknown;
  headers?: Record<string, string>;
}

function toResponse(error: unknown): ErrorResponse | undefined {
  if (error instanceof RequestValidationError) return { status: 422, detail: error.entries };
  if (error instanceof MalformedJsonError) return { status: 422, detail: [malformedJsonEntry(error)] };
  if (error instanceof HttpError) return { status: error.status, detail: error.message, headers: error.headers };
  return undefined;
}

/**
 * Gives every failure FastAPI's `{detail}` shape: validation failures as Pydantic's entries
 * (422), the shared HTTP errors with their message, anything else as a 500 whose text says
 * only what kind of failure it was.
 */
export const handleNotesErrors = (logger: Logger) =>
  handleErrors(logger, (error): ErrorAnswer => {
    const { status, detail, headers } = toResponse(error) ?? { status: 500, detail: describeServerError(error) };
    return { status, body: { detail }, headers };
  });
