import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, deviceFrom, setCookies, signIn, tokenFrom, USER } from '../support/authClient.js';
import { useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const JSON_TYPE = 'application/json';
const FORM = 'email=user@example.com&password=user-password';
const DELETION = 'token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax';
const INVALID = { error: 'invalid session' };

describe('auth POST /api/login', () => {
  it('answers {ok: true} and the cookies to either account, in any letter case', async () => {
    const service = await start();
    const reply = await service.login(USER);
    expect([reply.status, reply.json]).toEqual([200, { ok: true }]);
    const [cookie, device, ...others] = setCookies(reply);
    expect(cookie).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(tokenFrom(reply)).toMatch(UUID);
    // The device cookie of the throttling scheme, sent back to the login endpoint only.
    expect(device).toMatch(
      /^device=[^;]+; Max-Age=7776000; Path=\/api\/login; HttpOnly; SameSite=Lax$/,
    );
    expect(others).toEqual([]);
    // A browser that showed a valid device cookie is not sent another.
    const again = await service.request('POST', '/api/login', {
      json: USER,
      headers: { cookie: `device=${deviceFrom(reply)}` },
    });
    expect(setCookies(again).filter((line) => line.startsWith('device='))).toEqual([]);

    for (const [credentials, id, role] of [
      [USER, '1', 'user'],
      [ADMIN, '2', 'admin'],
      [{ email: 'User@Example.COM', password: USER.password }, '1', 'user'],
    ] as const) {
      const me = await service.me(await signIn(service, credentials));
      expect(me.json).toEqual({ user: { id, email: credentials.email.toLowerCase(), role } });
    }
  });

  it('answers 401 with the spec message and no cookie for wrong credentials', async () => {
    const service = await start();
    const wrongCredentials = { error: 'メールアドレスまたはパスワードが正しくありません' };
    for (const [wrong, credentials] of [
      ['a wrong password', { email: USER.email, password: 'admin-password' }],
      ['an unknown email', { email: 'nobody@example.com', password: USER.password }],
      ['a password in another letter case', { email: USER.email, password: 'USER-PASSWORD' }],
    ] as const) {
      const reply = await service.login(credentials);
      const answer = [wrong, reply.status, reply.json, setCookies(reply)];
      expect(answer).toEqual([wrong, 401, wrongCredentials, []]);
    }
  });

  it('issues a new, independent token at each login', async () => {
    const service = await start();
    const [first, second] = [await signIn(service), await signIn(service)];
    expect(second).not.toBe(first);
    await service.logout(first);
    const statuses = [(await service.me(first)).status, (await service.me(second)).status];
    expect(statuses).toEqual([401, 200]);
  });

  it('ends every session whose token a browser logging in again sends; a fresh one', async () => {
    const service = await start();
    const old = await signIn(service);
    const reply = await service.login(ADMIN, old);
    const fresh = tokenFrom(reply);
    expect([reply.status, fresh === old]).toEqual([200, false]);
    expect((await service.me(old)).json).toEqual(INVALID);
    expect((await service.me(fresh)).json).toMatchObject({ user: { role: 'admin' } });

    const [first, second] = [await signIn(service), await signIn(service, ADMIN)];
    const twice = await service.request('POST', '/api/login', {
      json: USER,
      headers: { cookie: `token=${first}; token=${second}` },
    });
    expect(twice.status).toBe(200);
    for (const ended of [first, second]) expect((await service.me(ended)).json).toEqual(INVALID);
    expect((await service.me(tokenFrom(twice))).status).toBe(200);
  });

  it('answers 400 {error} for a body that is not two strings, checking nothing', async () => {
    const service = await start();
    for (const [body, contentType] of [
      ['{"email": ', JSON_TYPE],
      [FORM, 'text/plain'],
      [FORM, 'application/x-www-form-urlencoded'],
      ...[
        '',
        '[]',
        '"user@example.com"',
        'null',
        '{"email":"user@example.com"}',
        '{"password":"user-password"}',
        '{"email":1,"password":"user-password"}',
        '{"email":"user@example.com","password":null}',
        '{"email":"","password":""}',
        // An email over 254 characters.
        JSON.stringify({ email: `${'a'.repeat(243)}@example.com`, password: 'x' }),
      ].map((body) => [body, JSON_TYPE]),
    ]) {
      const reply = await service.postLogin(body!, { 'content-type': contentType! });
      const answer = [body, reply.status, reply.json, setCookies(reply)];
      expect(answer).toEqual([body, 400, { error: messages.invalidLoginBody }, []]);
    }
  });

  it('answers 413 {error} for a body over 16 KiB, and accepts one just under', async () => {
    const service = await start();
    const padded = (size: number) => {
      const base = JSON.stringify({ ...USER, padding: '' });
      return JSON.stringify({ ...USER, padding: 'x'.repeat(size - base.length) });
    };
    const tooLarge = await service.postLogin(padded(16 * 1024 + 1));
    expect([tooLarge.status, tooLarge.json]).toEqual([413, { error: messages.bodyTooLarge }]);
    expect((await service.postLogin(padded(16 * 1024))).status).toBe(200);
  });

  it('answers 403 {error} with no cookie to a foreign Origin, and accepts its own', async () => {
    const service = await start();
    for (const origin of ['http://evil.example', 'https://127.0.0.1.evil.example', 'null']) {
      const reply = await service.postLogin(JSON.stringify(USER), { origin });
      const answer = [origin, reply.status, reply.json, setCookies(reply)];
      expect(answer).toEqual([origin, 403, { error: messages.foreignOrigin }, []]);
    }
    const own = await service.postLogin(JSON.stringify(USER), { origin: service.url });
    expect(own.status).toBe(200);
  });
});

describe('auth POST /api/logout', () => {
  it('ends the session and deletes the cookie, whatever the body; others stay', async () => {
    const service = await start();
    const [token, other] = [await signIn(service), await signIn(service)];
    const reply = await service.logout(token);
    expect([reply.status, reply.json, setCookies(reply)]).toEqual([200, { ok: true }, [DELETION]]);
    expect((await service.me(token)).json).toEqual(INVALID);
    expect((await service.dashboard(token)).status).toBe(302);
    expect((await service.me(other)).status).toBe(200);

    const withBody = await signIn(service);
    const ignored = await service.request('POST', '/api/logout', {
      headers: { cookie: `token=${withBody}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect([ignored.status, ignored.json]).toEqual([200, { ok: true }]);
    expect((await service.me(withBody)).status).toBe(401);

    // From its own origin; and the same answer without a live token.
    const sameOrigin = await signIn(service);
    const own = await service.logout(sameOrigin, { origin: service.url });
    expect(setCookies(own)).toEqual([DELETION]);
    expect((await service.me(sameOrigin)).status).toBe(401);
    for (const none of [undefined, crypto.randomUUID(), '']) {
      const same = await service.logout(none);
      const answer = [none, same.status, same.json, setCookies(same)];
      expect(answer).toEqual([none, 200, { ok: true }, [DELETION]]);
    }
  });

  it('answers another origin 200 {ok: true}, ending nothing and deleting no cookie', async () => {
    const service = await start();
    const token = await signIn(service);
    const anotherPort = `http://127.0.0.1:${Number(new URL(service.url).port) + 1}`;
    for (const origin of ['http://evil.example', anotherPort, 'null']) {
      const reply = await service.logout(token, { origin, 'content-type': 'text/plain' });
      const answer = [origin, reply.status, reply.json, setCookies(reply)];
      expect(answer).toEqual([origin, 200, { ok: true }, []]);
      expect((await service.me(token)).status).toBe(200);
    }
  });
});
