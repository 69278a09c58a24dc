import { describe, expect, it } from 'vitest';
import { setCookies, signIn, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

const DELETION = 'token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax';

describe('auth POST /api/logout', () => {
  it(
    'ends the session and deletes the cookie, whatever the body, for its own origin, leaving ' +
      'other sessions alone; answers the same without a live token',
    async () => {
      const service = await start();
      const [token, other] = [await signIn(service), await signIn(service)];
      const reply = await service.logout(token);
      expect([reply.status, reply.json, setCookies(reply)]).toEqual([
        200,
        { ok: true },
        [DELETION],
      ]);
      expect((await service.me(token)).json).toEqual({ error: 'invalid session' });
      expect((await service.dashboard(token)).status).toBe(302);
      expect((await service.me(other)).status).toBe(200);

      const withBody = await signIn(service);
      const ignored = await service.request('POST', '/api/logout', {
        headers: { cookie: `token=${withBody}`, 'content-type': 'application/json' },
        body: '{not json',
      });
      expect([ignored.status, ignored.json]).toEqual([200, { ok: true }]);
      expect((await service.me(withBody)).status).toBe(401);

      const sameOrigin = await signIn(service);
      const own = await service.logout(sameOrigin, { origin: service.url });
      expect(setCookies(own)).toEqual([DELETION]);
      expect((await service.me(sameOrigin)).status).toBe(401);

      for (const none of [undefined, crypto.randomUUID(), '']) {
        const same = await service.logout(none);
        expect([none, same.status, same.json, setCookies(same)]).toEqual([
          none,
          200,
          { ok: true },
          [DELETION],
        ]);
      }
    },
  );

  it('answers another origin 200 {ok: true}, ending nothing and deleting no cookie', async () => {
    const service = await start();
    const token = await signIn(service);
    const anotherPort = `http://127.0.0.1:${Number(new URL(service.url).port) + 1}`;
    for (const origin of ['http://evil.example', anotherPort, 'null']) {
      const reply = await service.logout(token, { origin, 'content-type': 'text/plain' });
      expect([origin, reply.status, reply.json, setCookies(reply)]).toEqual([
        origin,
        200,
        { ok: true },
        [],
      ]);
      expect((await service.me(token)).status).toBe(200);
    }
  });
});
