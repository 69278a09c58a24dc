import { describe, expect, it } from 'vitest';
import {
  ADMIN,
  setCookies,
  signIn,
  tokenFrom,
  USER,
  useAuthService,
} from '../support/authClient.js';

const { start } = useAuthService();

const INVALID = { error: 'invalid session' };

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
