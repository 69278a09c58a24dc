/**
 * Errors a handler throws. Each service has one error middleware that turns these (and the
 * body reader's and the database's failures) into that service's own response shape.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = (message: string) => new HttpError(401, message);
export const forbidden = (message: string) => new HttpError(403, message);
export const notFound = (message: string) => new HttpError(404, message);
export const payloadTooLarge = (message = 'Request body too large') => new HttpError(413, message);
export const unsupportedMediaType = (message: string) => new HttpError(415, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, message, { 'Retry-After': String(retryAfterSeconds) });

/** The body was declared JSON but does not parse. `position` counts Unicode code points. */
export class MalformedJsonError extends Error {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`Malformed JSON at position ${position}: ${reason}`);
    this.name = 'MalformedJsonError';
  }
}

/**
 * The text of a 500: what kind of failure it was, never its internals (SQL, stack, hosts).
 * Connection-level failures (refused, reset, pool or query timeout) read as "database unavailable".
 */
export function describeServerError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  const unreachable =
    name === 'KnexTimeoutError' ||
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|57P0[1-3]|08\w{3})$/.test(code)) ||
    /Connection terminated|timeout exceeded|Query read timeout/i.test(String((error as Error)?.message));
  return unreachable ? 'database unavailable' : 'internal server error';
}
