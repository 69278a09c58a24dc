import { describe, expect, it } from 'vitest';
import { ADMIN, signIn, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

// A browser sends several `token` cookies when cookies of that name were set for several paths
// or domains (a sibling site can plant one); the first that names a live session is the user's.
describe('auth several token cookies', () => {
  const cookies = (...tokens: string[]) => ({
    cookie: tokens.map((token) => `token=${token}`).join('; '),
  });

  it.each([
    ['an unknown token', () => crypto.randomUUID()],
    ['an empty token', () => ''],
    ['a token that is not a UUID', () => 'planted'],
  ])('authenticates /api/me with the real token after %s', async (_, planted) => {
    const service = await start();
    const token = await signIn(service, ADMIN);
    const reply = await service.request('GET', '/api/me', { headers: cookies(planted(), token) });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ user: { id: '2', email: ADMIN.email, role: 'admin' } });
  });

  it('authenticates /api/me with the real token after one of an expired session', async () => {
    const service = await start();
    const stale = await signIn(service);
    service.advance(1800);
    const token = await signIn(service, ADMIN);
    service.advance(1800);
    expect((await service.me(stale)).json).toEqual({ error: 'invalid session' });
    const reply = await service.request('GET', '/api/me', { headers: cookies(stale, token) });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ user: { email: ADMIN.email } });
  });

  it('takes the first of two live sessions', async () => {
    const service = await start();
    const [user, admin] = [await signIn(service), await signIn(service, ADMIN)];
    expect(
      (await service.request('GET', '/api/me', { headers: cookies(user, admin) })).json,
    ).toMatchObject({ user: { role: 'user' } });
    expect(
      (await service.request('GET', '/api/me', { headers: cookies(admin, user) })).json,
    ).toMatchObject({ user: { role: 'admin' } });
  });

  it('answers 401 invalid session when none names a live session', async () => {
    const service = await start();
    const reply = await service.request('GET', '/api/me', {
      headers: cookies(crypto.randomUUID(), '', crypto.randomUUID()),
    });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid session' });
  });

  it('serves the dashboard with the real token after a planted one', async () => {
    const service = await start();
    const token = await signIn(service);
    const reply = await service.page('/dashboard', cookies(crypto.randomUUID(), token));
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('<div id="root">');
  });

  it('ends every session named when logging out', async () => {
    const service = await start();
    const [first, second] = [await signIn(service), await signIn(service, ADMIN)];
    const reply = await service.request('POST', '/api/logout', { headers: cookies(first, second) });
    expect(reply.status).toBe(200);
    expect((await service.me(first)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).json).toEqual({ error: 'invalid session' });
  });
});
