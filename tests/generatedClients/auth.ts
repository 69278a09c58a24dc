// A client of the login service, as its users write one (see generatedClients.test.ts): it throws
// at the first answer it did not expect. Argument: JSON `{baseUrl, admin, user}`, accounts being
// `{email, password}`.
import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import type { paths } from './auth.api.js';

type Account = { email: string; password: string };
type Given = { baseUrl: string; admin: Account; user: Account };
const { baseUrl, admin, user } = JSON.parse(process.argv[2] ?? '') as Given;
const client = createClient<paths>({ baseUrl });

/** The value of the cookie `name` an answer sets, if it sets one. */
const cookieOf = (response: Response, name: string) =>
  response.headers
    .getSetCookie()
    .map((line) => /^([^=;]+)=([^;]*)/.exec(line))
    .find((match) => match?.[1] === name)?.[2];

/** A request with the session cookie of `token`, as a browser sends it. */
const withSession = (token: string) => ({ headers: { Cookie: `token=${token}` } });

/** Logs in as a browser without cookies: the session's token, and the answer. */
async function logIn(account: Account) {
  const { data, response } = await client.POST('/api/login', { body: account });
  assert.deepEqual(data, { ok: true });
  const token = cookieOf(response, 'token');
  assert.ok(token);
  return { token, response };
}

assert.deepEqual((await client.GET('/live')).data, { status: 'live' });
assert.deepEqual((await client.GET('/ready')).data, { status: 'ready' });

const wrong = { email: user.email, password: `not ${user.password}` };
const refused = await client.POST('/api/login', { body: wrong });
assert.equal(refused.response.status, 401);
assert.equal(typeof refused.error?.error, 'string');
const zstd = { 'Content-Encoding': 'zstd' };
const encoded = await client.POST('/api/login', { body: admin, headers: zstd });
assert.equal(encoded.response.status, 415);
assert.deepEqual(encoded.error, { error: 'Unsupported Content-Encoding: zstd' });

// Two browsers of the administrator's, each told to keep a device cookie for the login endpoint.
const first = await logIn(admin);
assert.ok(cookieOf(first.response, 'device'));
const second = await logIn(admin);
const session = withSession(first.token);
/** The administrator's request naming `id` in its path. */
const naming = <Id>(id: Id) => ({ ...session, params: { path: { id } } });

const me = await client.GET('/api/me', session);
assert.equal(me.data?.user.email, admin.email);
assert.equal(me.data.user.role, 'admin');

const mine = await client.GET('/api/sessions', session);
assert.deepEqual(mine.data?.sessions.map(({ current }) => current).join(), 'true,false');
const other = mine.data.sessions[1];
const endedOne = await client.DELETE('/api/sessions/{id}', naming(other.id));
assert.deepEqual(endedOne.data, { ended: 1 });
const signedOut = await client.GET('/api/me', withSession(second.token));
assert.equal(signedOut.response.status, 401);
assert.deepEqual(signedOut.error, { error: 'invalid session' });
await logIn(admin);
const endedOthers = await client.DELETE('/api/sessions', session);
assert.deepEqual(endedOthers.data, { ended: 1 });

// The user's sessions, seen and ended by the administrator; none of it open to the user.
const asUser = withSession((await logIn(user)).token);
const forbidden = await client.GET('/api/admin/settings', asUser);
assert.equal(forbidden.response.status, 403);
assert.equal(typeof forbidden.error?.error, 'string');
const everyone = await client.GET('/api/admin/sessions', session);
const account = everyone.data?.users.find(({ email }) => email === user.email);
assert.equal(account?.sessions.length, 1);
const { id: sessionId } = account.sessions[0];
const endedByAdmin = await client.DELETE('/api/admin/sessions/{id}', naming(sessionId));
assert.deepEqual(endedByAdmin.data, { ended: 1 });
await logIn(user);
const endedAll = await client.DELETE('/api/admin/users/{id}/sessions', naming(account.id));
assert.deepEqual(endedAll.data, { ended: 1 });

// The wrong password, in the account's throttling and in the audit trail.
const overview = await client.GET('/api/admin/users', session);
const throttled = overview.data?.users.find(({ id }) => id === account.id);
assert.equal(throttled?.throttle.failures, 1);
assert.ok(throttled.events.some(({ type }) => type === 'login.failed'));
const unlocked = await client.DELETE('/api/admin/users/{id}/throttle', naming(account.id));
assert.deepEqual(unlocked.data?.cleared, throttled.throttle);
const audit = await client.GET('/api/admin/audit', {
  ...session,
  params: { query: { type: 'login.failed', email: user.email, limit: 10 } },
});
assert.deepEqual(
  audit.data?.events.map(({ email, userId }) => ({ email, userId })),
  [{ email: user.email, userId: account.id }],
);
assert.equal(audit.data.next, null);

const settings = await client.GET('/api/admin/settings', session);
assert.equal(settings.data?.sessions.store, 'postgres');

const loggedOut = await client.POST('/api/logout', session);
assert.deepEqual(loggedOut.data, { ok: true });
assert.equal(cookieOf(loggedOut.response, 'token'), '');
assert.match(loggedOut.response.headers.get('set-cookie') ?? '', /^token=; Max-Age=0;/);
assert.equal((await client.GET('/api/me', session)).response.status, 401);
