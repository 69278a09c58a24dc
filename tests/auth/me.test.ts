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

describe('auth GET /api/me', () => {
  it('answers 401 unauthenticated without a cookie', async () => {
    const service = await start();
    const reply = await service.me();
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'unauthenticated' });
    expect(reply.headers['cache-control']).toBe('no-store');
  });

  it('answers 401 unauthenticated for an empty token cookie', async () => {
    const service = await start();
    const reply = await service.me('');
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'unauthenticated' });
  });

  it('answers 401 invalid session for a token not in the table', async () => {
    const service = await start();
    const reply = await service.me(crypto.randomUUID());
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid session' });
    expect(reply.headers['cache-control']).toBe('no-store');
  });

  it('is never stored by caches', async () => {
    const service = await start();
    const reply = await service.me(await signIn(service));
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
  });

  it('ends a session 3600 s after login', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3599);
    expect((await service.me(token)).status).toBe(200);
    service.advance(1);
    const reply = await service.me(token);
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid session' });
  });

  it('follows SESSION_TTL_SECONDS for both the session and the cookie', async () => {
    const service = await start({ SESSION_TTL_SECONDS: '60' });
    const reply = await service.login(USER);
    expect(setCookies(reply)[0]).toContain('; Max-Age=60;');
    service.advance(60);
    expect((await service.me(tokenFrom(reply))).status).toBe(401);
  });

  it('keeps at most SESSION_MAX sessions, ending the oldest first', async () => {
    const service = await start({ SESSION_MAX: '2' });
    const [first, second, third] = [
      await signIn(service),
      await signIn(service),
      await signIn(service, ADMIN),
    ];
    expect((await service.me(first)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).status).toBe(200);
    expect((await service.me(third)).status).toBe(200);
  });

  it(
    'keeps at most SESSION_MAX_PER_USER sessions per ' +
      "account, ending that account's oldest, never another's",
    async () => {
      const service = await start({ SESSION_MAX_PER_USER: '3' });
      const admin = await signIn(service, ADMIN);
      const users = [
        await signIn(service),
        await signIn(service),
        await signIn(service),
        await signIn(service),
      ];
      expect((await service.me(users[0])).json).toEqual({ error: 'invalid session' });
      for (const token of [...users.slice(1), admin])
        expect((await service.me(token)).status).toBe(200);
    },
  );
});
