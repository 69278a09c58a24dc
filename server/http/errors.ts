import createError, { HttpError } from 'http-errors';

export { HttpError };
// Exposed whatever its status: a refusal is the answer the service chose, shown to the client.
export const httpError = (status: number, message?: string, headers?: Record<string, string>) =>
  createError(status, ...(message === undefined ? [] : [message]), {
    expose: true,
    ...(headers && { headers }),
  });

export const INVALID_HOST = 'Invalid Host header';

export const unauthorized = (message?: string) => httpError(401, message);
export const forbidden = (message?: string) => httpError(403, message);
export const notFound = (message?: string) => httpError(404, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  httpError(429, message, { 'Retry-After': String(retryAfterSeconds) });

/** `position` counts Unicode code points. */
export class MalformedJsonError extends Error {
  name = 'MalformedJsonError';
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`Malformed JSON at position ${position}: ${reason}`);
  }
}

/** The text of a 500: the kind of failure, never its internals (SQL, stack, hosts). */
export function describeServerError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const unreachable =
    (typeof code === 'string' &&
      /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|57P0[1-3]|57014|08\w{3})$/.test(code)) ||
    /Connection terminated|timeout exceeded|Query read timeout|connection timeout/i.test(
      String((error as Error)?.message),
    );
  return unreachable ? 'database unavailable' : 'internal server error';
}

/** The client went away, or stopped sending or reading. */
export function isClientGone(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (
    ['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE'].includes(code ?? '') ||
    message === 'aborted' ||
    message === 'request aborted'
  );
}

/** A reason the process cannot start, worded for a person: printed as it is, without a stack. */
export class StartupError extends Error {
  name = 'StartupError';
}

/** A StartupError `read` throws is printed, and the process exits with 1. */
export function exitOnStartupError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
