import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import {
  ADMIN,
  deviceFrom,
  setCookies,
  signIn,
  tokenFrom,
  USER,
  useAuthService,
} from '../support/authClient.js';

const { start } = useAuthService();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('auth POST /api/login', () => {
  it('answers {ok: true} with the session cookie, exactly as the spec lists it', async () => {
    const service = await start();
    const reply = await service.login(USER);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    const [cookie, device, ...others] = setCookies(reply);
    expect(cookie).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(tokenFrom(reply)).toMatch(UUID);
    // Beside it, the device cookie of the throttling scheme, sent back to the login endpoint only.
    expect(device).toMatch(
      /^device=[^;]+; Max-Age=7776000; Path=\/api\/login; HttpOnly; SameSite=Lax$/,
    );
    expect(others).toEqual([]);
  });

  it('answers 400 {error} for an email over 254 characters, checking nothing', async () => {
    const service = await start();
    const reply = await service.login({
      email: `${'a'.repeat(243)}@example.com`,
      password: 'whatever',
    });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: messages.invalidLoginBody });
  });

  it('sends no device cookie again to a browser that showed a valid one', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER));
    const again = await service.request('POST', '/api/login', {
      json: USER,
      headers: { cookie: `device=${device}` },
    });
    expect(setCookies(again).filter((line) => line.startsWith('device='))).toEqual([]);
  });

  it('logs in either account, and /api/me then returns it', async () => {
    const service = await start();
    for (const [credentials, id, role] of [
      [USER, '1', 'user'],
      [ADMIN, '2', 'admin'],
    ] as const) {
      const reply = await service.me(await signIn(service, credentials));
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual({ user: { id, email: credentials.email, role } });
    }
  });

  it('matches the email whatever its letter case', async () => {
    const service = await start();
    const reply = await service.login({ email: 'User@Example.COM', password: USER.password });
    expect(reply.status).toBe(200);
  });

  it.each([
    ['a wrong password', { email: USER.email, password: 'admin-password' }],
    ['an unknown email', { email: 'nobody@example.com', password: USER.password }],
    ['a password with different letter case', { email: USER.email, password: 'USER-PASSWORD' }],
  ])('answers 401 with the spec message and sets no cookie for %s', async (_, credentials) => {
    const service = await start();
    const reply = await service.login(credentials);
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'メールアドレスまたはパスワードが正しくありません' });
    expect(setCookies(reply)).toEqual([]);
  });

  it('issues a new, independent token at each login', async () => {
    const service = await start();
    const first = await signIn(service);
    const second = await signIn(service);
    expect(second).not.toBe(first);
    await service.logout(first);
    expect((await service.me(first)).status).toBe(401);
    expect((await service.me(second)).status).toBe(200);
  });

  it('replaces the session of a browser logging in again: fresh token, old one ended', async () => {
    const service = await start();
    const old = await signIn(service);
    const reply = await service.login(ADMIN, old);
    expect(reply.status).toBe(200);
    const fresh = tokenFrom(reply);
    expect(fresh).not.toBe(old);
    expect((await service.me(old)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(fresh)).json).toMatchObject({ user: { role: 'admin' } });
  });

  it('ends every session whose token the browser sends when it logs in again', async () => {
    const service = await start();
    const [first, second] = [await signIn(service), await signIn(service, ADMIN)];
    const reply = await service.request('POST', '/api/login', {
      json: USER,
      headers: { cookie: `token=${first}; token=${second}` },
    });
    expect(reply.status).toBe(200);
    expect((await service.me(first)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(tokenFrom(reply))).status).toBe(200);
  });

  it.each([
    ['malformed JSON', 'application/json', '{"email": '],
    ['a text body', 'text/plain', 'email=user@example.com&password=user-password'],
    [
      'a form body',
      'application/x-www-form-urlencoded',
      'email=user@example.com&password=user-password',
    ],
    ['no body', 'application/json', ''],
    ['a JSON array', 'application/json', '[]'],
    ['a JSON string', 'application/json', '"user@example.com"'],
    ['JSON null', 'application/json', 'null'],
    ['a missing password', 'application/json', '{"email":"user@example.com"}'],
    ['a missing email', 'application/json', '{"password":"user-password"}'],
    ['a number as email', 'application/json', '{"email":1,"password":"user-password"}'],
    ['a null password', 'application/json', '{"email":"user@example.com","password":null}'],
    ['empty strings', 'application/json', '{"email":"","password":""}'],
  ])('answers 400 {error} for %s', async (_, contentType, body) => {
    const service = await start();
    const reply = await service.postLogin(body, { 'content-type': contentType });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: messages.invalidLoginBody });
    expect(setCookies(reply)).toEqual([]);
  });

  it('answers 413 {error} for a body over 16 KiB, and accepts one just under', async () => {
    const service = await start();
    const padded = (size: number) => {
      const base = JSON.stringify({ ...USER, padding: '' });
      return JSON.stringify({ ...USER, padding: 'x'.repeat(size - base.length) });
    };
    const tooLarge = await service.postLogin(padded(16 * 1024 + 1));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json).toEqual({ error: messages.bodyTooLarge });
    expect((await service.postLogin(padded(16 * 1024))).status).toBe(200);
  });

  it.each([['http://evil.example'], ['https://127.0.0.1.evil.example'], ['null']])(
    'answers 403 {error} when Origin is %s',
    async (origin) => {
      const service = await start();
      const reply = await service.postLogin(JSON.stringify(USER), { origin });
      expect(reply.status).toBe(403);
      expect(reply.json).toEqual({ error: messages.foreignOrigin });
      expect(setCookies(reply)).toEqual([]);
    },
  );

  it('accepts an Origin naming this service', async () => {
    const service = await start();
    const reply = await service.postLogin(JSON.stringify(USER), { origin: service.url });
    expect(reply.status).toBe(200);
  });
});
