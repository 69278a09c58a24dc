import type { Reply } from '../../harness/http.js';
import { USER, type AuthClient } from '../support/authClient.js';

/** A wrong password for `email`, from `from`. */
export const fail = (service: AuthClient, email = USER.email, from = '127.0.0.1') =>
  service.login({ email, password: 'wrong' }, undefined, from);

/** `127.0.<subnet>.<first>` to `…<last>`. */
export const addresses = (subnet: number, first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, i) => `127.0.${subnet}.${first + i}`);

/**
 * The statuses of `times` wrong passwords for `email` from each of `from`: the addresses at once,
 * each one's in turn. The limits are read as each attempt arrives, so the counts are those of
 * attempts sent one by one.
 */
export async function failFrom(service: AuthClient, email: string, from: string[], times = 5) {
  const statuses = await Promise.all(
    from.map(async (address) => {
      const seen = [];
      for (let attempt = 1; attempt <= times; attempt++)
        seen.push((await fail(service, email, address)).status);
      return seen;
    }),
  );
  return statuses.flat();
}

/**
 * The statuses of `count` requests made by `send(i)`, 15 at a time: fewer than the 32 checks an
 * address may have waiting.
 */
export async function together(count: number, send: (i: number) => Promise<Reply>) {
  const statuses: number[] = [];
  for (let first = 0; first < count; first += 15) {
    const batch = Array.from({ length: Math.min(15, count - first) }, (_, i) => send(first + i));
    statuses.push(...(await Promise.all(batch)).map((answer) => answer.status));
  }
  return statuses;
}

/** A login from a browser that shows the device cookie `device`. */
export const withDevice = (service: AuthClient, device: string, from: string, login = USER) =>
  service.request('POST', '/api/login', {
    json: login,
    headers: { cookie: `device=${device}` },
    localAddress: from,
  });

/** The id of the session of `token` (`current`), or of another of its user's. */
export async function sessionId(service: AuthClient, token: string, current = true) {
  const { sessions } = (await service.as(token, 'GET', '/api/sessions')).json as {
    sessions: { id: string; current: boolean }[];
  };
  return sessions.find((session) => session.current === current)!.id;
}

/** The status and body of an answer, to compare at once. */
export const answer = async (reply: Promise<Reply>) => {
  const { status, json } = await reply;
  return [status, json];
};
