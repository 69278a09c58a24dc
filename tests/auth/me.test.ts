import { describe, expect, it } from 'vitest';
import { ADMIN, setCookies, signIn, tokenFrom, USER } from '../support/authClient.js';
import { useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

const INVALID = { error: 'invalid session' };
const cookies = (...tokens: string[]) => ({
  cookie: tokens.map((token) => `token=${token}`).join('; '),
});

describe('auth GET /api/me', () => {
  it('answers 401 without a session, and is never stored by caches', async () => {
    const service = await start();
    for (const [token, error] of [
      [undefined, 'unauthenticated'],
      ['', 'unauthenticated'],
      [crypto.randomUUID(), 'invalid session'],
      [await signIn(service), undefined],
    ]) {
      const reply = await service.me(token);
      expect([token, reply.status, reply.json, reply.headers['cache-control']]).toEqual([
        token,
        error ? 401 : 200,
        error ? { error } : { user: { id: '1', email: USER.email, role: 'user' } },
        'no-store',
      ]);
    }
  });

  it('ends a session 3600 s after login, or SESSION_TTL_SECONDS, cookie included', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3599);
    expect((await service.me(token)).status).toBe(200);
    service.advance(1);
    const reply = await service.me(token);
    expect([reply.status, reply.json]).toEqual([401, INVALID]);

    const shorter = await start({ SESSION_TTL_SECONDS: '60' });
    const login = await shorter.login(USER);
    expect(setCookies(login)[0]).toContain('; Max-Age=60;');
    shorter.advance(60);
    expect((await shorter.me(tokenFrom(login))).status).toBe(401);
  });

  it('keeps at most SESSION_MAX sessions, ending the oldest first', async () => {
    const service = await start({ SESSION_MAX: '2' });
    const tokens = [await signIn(service), await signIn(service), await signIn(service, ADMIN)];
    expect((await service.me(tokens[0])).json).toEqual(INVALID);
    for (const token of tokens.slice(1)) expect((await service.me(token)).status).toBe(200);
  });

  it("keeps at most SESSION_MAX_PER_USER per account, ending that account's oldest", async () => {
    const service = await start({ SESSION_MAX_PER_USER: '3' });
    const admin = await signIn(service, ADMIN);
    const users = [];
    for (let login = 0; login < 4; login++) users.push(await signIn(service));
    expect((await service.me(users[0])).json).toEqual(INVALID);
    for (const token of [...users.slice(1), admin])
      expect((await service.me(token)).status).toBe(200);
  });
});

// A browser sends several `token` cookies when cookies of that name were set for several paths
// or domains (a sibling site can plant one); the first that names a live session is the user's.
describe('auth several token cookies', () => {
  it('/api/me and the dashboard take the first token of a live session', async () => {
    const service = await start();
    const stale = await signIn(service);
    service.advance(1800);
    const [user, admin] = [await signIn(service), await signIn(service, ADMIN)];
    service.advance(1800);
    expect((await service.me(stale)).json).toEqual(INVALID);
    const me = async (...tokens: string[]) =>
      (await service.request('GET', '/api/me', { headers: cookies(...tokens) })).json;
    // After an unknown, empty, malformed or expired one.
    const theAdmin = { user: { id: '2', email: ADMIN.email, role: 'admin' } };
    for (const planted of [crypto.randomUUID(), '', 'planted', stale])
      expect([planted, await me(planted, admin)]).toEqual([planted, theAdmin]);
    expect(await me(user, admin)).toMatchObject({ user: { role: 'user' } });
    expect(await me(admin, user)).toMatchObject({ user: { role: 'admin' } });
    const none = cookies(crypto.randomUUID(), '', crypto.randomUUID());
    const refused = await service.request('GET', '/api/me', { headers: none });
    expect([refused.status, refused.json]).toEqual([401, INVALID]);

    const dashboard = await service.page('/dashboard', cookies(crypto.randomUUID(), user));
    const page = expect.stringContaining('<div id="root">');
    expect([dashboard.status, dashboard.text]).toEqual([200, page]);
  });

  it('ends every session named when logging out', async () => {
    const service = await start();
    const [first, second] = [await signIn(service), await signIn(service, ADMIN)];
    const reply = await service.request('POST', '/api/logout', { headers: cookies(first, second) });
    expect(reply.status).toBe(200);
    for (const token of [first, second]) expect((await service.me(token)).json).toEqual(INVALID);
  });
});
