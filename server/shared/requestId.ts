import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header that names a request, for the client, the proxies in front and the log. */
export const REQUEST_ID = 'x-request-id';

const VALID = /^[\x21-\x7e]{1,128}$/;

/**
 * The request's id: the one its client (or a proxy in front, nginx's `$request_id`) sent, when it
 * is 1 to 128 visible ASCII characters, so that a line in the log can be tied to theirs; else a
 * new one. Anything else a client sends is replaced, never repeated into the log as it came.
 */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers[REQUEST_ID];
  return typeof sent === 'string' && VALID.test(sent) ? sent : randomUUID();
}
