import { describe, expect, it } from 'vitest';
import { ADMIN, signIn, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

const cookies = (...tokens: string[]) => ({
  cookie: tokens.map((token) => `token=${token}`).join('; '),
});
const INVALID = { error: 'invalid session' };

// A browser sends several `token` cookies when cookies of that name were set for several paths
// or domains (a sibling site can plant one); the first that names a live session is the user's.
describe('auth several token cookies', () => {
  it(
    'authenticates /api/me and the dashboard with the real token after an unknown, empty, ' +
      'malformed or expired one; takes the first of two live ones; 401 when none is live',
    async () => {
      const service = await start();
      const stale = await signIn(service);
      service.advance(1800);
      const [user, admin] = [await signIn(service), await signIn(service, ADMIN)];
      service.advance(1800);
      expect((await service.me(stale)).json).toEqual(INVALID);
      const me = async (...tokens: string[]) =>
        (await service.request('GET', '/api/me', { headers: cookies(...tokens) })).json;
      for (const planted of [crypto.randomUUID(), '', 'planted', stale])
        expect([planted, await me(planted, admin)]).toEqual([
          planted,
          { user: { id: '2', email: ADMIN.email, role: 'admin' } },
        ]);
      expect(await me(user, admin)).toMatchObject({ user: { role: 'user' } });
      expect(await me(admin, user)).toMatchObject({ user: { role: 'admin' } });
      const none = cookies(crypto.randomUUID(), '', crypto.randomUUID());
      const refused = await service.request('GET', '/api/me', { headers: none });
      expect([refused.status, refused.json]).toEqual([401, INVALID]);

      const dashboard = await service.page('/dashboard', cookies(crypto.randomUUID(), user));
      expect(dashboard.status).toBe(200);
      expect(dashboard.text).toContain('<div id="root">');
    },
  );

  it('ends every session named when logging out', async () => {
    const service = await start();
    const [first, second] = [await signIn(service), await signIn(service, ADMIN)];
    const reply = await service.request('POST', '/api/logout', { headers: cookies(first, second) });
    expect(reply.status).toBe(200);
    for (const token of [first, second]) expect((await service.me(token)).json).toEqual(INVALID);
  });
});
