import { describe, expect, it } from 'vitest';
import { setCookies, signIn, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

describe('auth POST /api/logout', () => {
  const DELETION = 'token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax';

  it('ends the session and deletes the cookie', async () => {
    const service = await start();
    const token = await signIn(service);
    const reply = await service.logout(token);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    expect(setCookies(reply)).toEqual([DELETION]);
    expect((await service.me(token)).json).toEqual({ error: 'invalid session' });
    expect((await service.dashboard(token)).status).toBe(302);
  });

  it.each([
    ['no cookie', undefined],
    ['an unknown token', crypto.randomUUID()],
    ['an empty token', ''],
  ])('answers the same with %s', async (_, token) => {
    const service = await start();
    const reply = await service.logout(token);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    expect(setCookies(reply)).toEqual([DELETION]);
  });

  it('ignores a body: still ends the session', async () => {
    const service = await start();
    const token = await signIn(service);
    const reply = await service.request('POST', '/api/logout', {
      headers: { cookie: `token=${token}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    expect((await service.me(token)).status).toBe(401);
  });

  it.each([['http://evil.example'], ['another port of this host'], ['null']])(
    'answers a page of another origin (%s) the same 200 ' +
      '{ok: true}, but ends nothing and deletes no cookie',
    async (origin) => {
      const service = await start();
      const token = await signIn(service);
      const { port } = new URL(service.url);
      const foreign =
        origin === 'another port of this host' ? `http://127.0.0.1:${Number(port) + 1}` : origin;
      const reply = await service.logout(token, { origin: foreign, 'content-type': 'text/plain' });
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual({ ok: true });
      expect(setCookies(reply)).toEqual([]);
      expect((await service.me(token)).status).toBe(200);
    },
  );

  it('ends the session for a page of its own origin', async () => {
    const service = await start();
    const token = await signIn(service);
    const reply = await service.logout(token, { origin: service.url });
    expect(setCookies(reply)).toEqual(['token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax']);
    expect((await service.me(token)).status).toBe(401);
  });

  it('leaves other sessions alone', async () => {
    const service = await start();
    const [mine, other] = [await signIn(service), await signIn(service)];
    await service.logout(mine);
    expect((await service.me(other)).status).toBe(200);
  });
});
