import { describe, expect, it } from 'vitest';
import type { Reply } from '../harness/http.js';
import { startService } from '../harness/service.js';
import { auth } from '../server/auth/index.js';
import { messages } from '../server/auth/messages.js';
import { ConfigError } from '../server/shared/config.js';
import { ADMIN, authConfig, deviceFrom, signIn, tokenFrom, USER, useAuthService, type AuthClient } from './support/authClient.js';

const { start, spa } = useAuthService();

const setCookies = (reply: Reply) => reply.headers['set-cookie'] ?? [];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /api/login', () => {
  it('answers {ok: true} with the session cookie, exactly as the spec lists it', async () => {
    const service = await start();
    const reply = await service.login(USER);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    const [cookie, device, ...others] = setCookies(reply);
    expect(cookie).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(tokenFrom(reply)).toMatch(UUID);
    // Beside it, the device cookie of the throttling scheme, sent back to the login endpoint only.
    expect(device).toMatch(/^device=[^;]+; Max-Age=31536000; Path=\/api\/login; HttpOnly; SameSite=Lax$/);
    expect(others).toEqual([]);
  });

  it('answers 400 {error} for an email over 254 characters, checking nothing', async () => {
    const service = await start();
    const reply = await service.login({ email: `${'a'.repeat(243)}@example.com`, password: 'whatever' });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ error: messages.invalidLoginBody });
  });

  it('sends no device cookie again to a browser that showed a valid one', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER));
    const again = await service.request('POST', '/api/login', { json: USER, headers: { cookie: `device=${device}` } });
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

  it('replaces the session of a browser that logs in again: fresh token, old one ended', async () => {
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
    const reply = await service.request('POST', '/api/login', { json: USER, headers: { cookie: `token=${first}; token=${second}` } });
    expect(reply.status).toBe(200);
    expect((await service.me(first)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(tokenFrom(reply))).status).toBe(200);
  });

  it.each([
    ['malformed JSON', 'application/json', '{"email": '],
    ['a text body', 'text/plain', 'email=user@example.com&password=user-password'],
    ['a form body', 'application/x-www-form-urlencoded', 'email=user@example.com&password=user-password'],
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

  it.each([['http://evil.example'], ['https://127.0.0.1.evil.example'], ['null']])('answers 403 {error} when Origin is %s', async (origin) => {
    const service = await start();
    const reply = await service.postLogin(JSON.stringify(USER), { origin });
    expect(reply.status).toBe(403);
    expect(reply.json).toEqual({ error: messages.foreignOrigin });
    expect(setCookies(reply)).toEqual([]);
  });

  it('accepts an Origin naming this service', async () => {
    const service = await start();
    const reply = await service.postLogin(JSON.stringify(USER), { origin: service.url });
    expect(reply.status).toBe(200);
  });
});

describe('login throttling', () => {
  const fail = (service: AuthClient, email = USER.email, from = '127.0.0.1') => service.login({ email, password: 'wrong' }, undefined, from);

  it('blocks an account and client address pair after 5 failures in 15 minutes, even with the right password, until the window frees', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await fail(service)).status).toBe(401);
      service.advance(1);
    }
    const blocked = await service.login(USER);
    expect(blocked.status).toBe(429);
    expect(blocked.json).toEqual({ error: messages.tooManyAttempts });
    // The first failure, 5 s ago, leaves the 15-minute window in 895 s.
    expect(blocked.headers['retry-after']).toBe('895');
    expect(setCookies(blocked)).toEqual([]);

    service.advance(894);
    expect((await service.login(USER)).status).toBe(429);
    service.advance(1);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('admits the right password from another address while one address is blocked for the account', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service, USER.email, '127.0.0.2');
    expect((await service.login(USER, undefined, '127.0.0.2')).status).toBe(429);
    expect((await service.login(USER, undefined, '127.0.0.3')).status).toBe(200);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('bounds guessing at 100 failures an hour per account over all addresses; past it only a browser that logged in before gets in', async () => {
    const service = await start();
    const owner = await service.login(USER, undefined, '127.0.0.99');
    const device = deviceFrom(owner);
    let failures = 0;
    for (let address = 2; address <= 30; address++) {
      for (let attempt = 1; attempt <= 5; attempt++) if ((await fail(service, USER.email, `127.0.1.${address}`)).status === 401) failures++;
    }
    expect(failures).toBe(100);
    const fresh = await service.login(USER, undefined, '127.0.2.1');
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    // The owner's browser shows its device cookie: admitted, from any address.
    const trusted = await service.request('POST', '/api/login', { json: USER, headers: { cookie: `device=${device}` }, localAddress: '127.0.2.2' });
    expect(trusted.status).toBe(200);
    // Other accounts are not touched.
    expect((await service.login(ADMIN, undefined, '127.0.2.1')).status).toBe(200);
    service.advance(3600);
    expect((await service.login(USER, undefined, '127.0.2.1')).status).toBe(200);
  });

  it('trusts a device cookie only for the account it was issued for, and never a forged one', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER));
    for (let address = 2; address <= 21; address++) {
      for (let attempt = 1; attempt <= 5; attempt++) {
        await fail(service, ADMIN.email, `127.0.1.${address}`);
        await fail(service, USER.email, `127.0.1.${address}`);
      }
    }
    const withDevice = (cookie: string, credentials = USER) => service.request('POST', '/api/login', { json: credentials, headers: { cookie: `device=${cookie}` }, localAddress: '127.0.3.1' });
    expect((await withDevice(device, ADMIN)).status).toBe(429);
    const [id, nonce] = device.split('.');
    expect((await withDevice(`${id}.${nonce}.forged`)).status).toBe(429);
    expect((await withDevice(device)).status).toBe(200);
  });

  it('admits correct logins arriving together, every one of them', async () => {
    const service = await start();
    const answers = await Promise.all(Array.from({ length: 16 }, () => service.login(USER)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill(200));
  });

  it('checks guesses arriving together no faster than the limit allows: 5 wrong, the rest wait and are refused', async () => {
    const service = await start();
    const answers = await Promise.all(Array.from({ length: 20 }, () => fail(service)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
  });

  it('counts each account on its own, and emails whatever their letter case as one', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) await fail(service, attempt % 2 ? 'USER@example.com' : USER.email);
    expect((await service.login(USER)).status).toBe(429);
    expect((await service.login(ADMIN)).status).toBe(200);
  });

  it('clears a pair\'s failures on success', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 4; attempt++) await fail(service);
    expect((await service.login(USER)).status).toBe(200);
    for (let attempt = 1; attempt <= 5; attempt++) expect((await fail(service)).status).toBe(401);
    expect((await fail(service)).status).toBe(429);
  });

  it('does not count requests it refused as failures', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) await fail(service);
    service.advance(60);
    // Were these counted, they would fill the window anew and block past 900 s.
    for (let attempt = 1; attempt <= 10; attempt++) expect((await fail(service)).status).toBe(429);
    service.advance(840);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('does not count bodies it could not read', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 11; attempt++) {
      expect((await service.postLogin(JSON.stringify({ email: USER.email }))).status).toBe(400);
    }
    expect((await service.login(USER)).status).toBe(200);
  });
});

describe('GET /api/me', () => {
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
    const [first, second, third] = [await signIn(service), await signIn(service), await signIn(service, ADMIN)];
    expect((await service.me(first)).json).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).status).toBe(200);
    expect((await service.me(third)).status).toBe(200);
  });

  it('keeps at most SESSION_MAX_PER_USER sessions per account, ending that account\'s oldest, never another\'s', async () => {
    const service = await start({ SESSION_MAX_PER_USER: '3' });
    const admin = await signIn(service, ADMIN);
    const users = [await signIn(service), await signIn(service), await signIn(service), await signIn(service)];
    expect((await service.me(users[0])).json).toEqual({ error: 'invalid session' });
    for (const token of [...users.slice(1), admin]) expect((await service.me(token)).status).toBe(200);
  });
});

// A browser sends several `token` cookies when cookies of that name were set for several paths
// or domains (a sibling site can plant one); the first that names a live session is the user's.
describe('several token cookies', () => {
  const cookies = (...tokens: string[]) => ({ cookie: tokens.map((token) => `token=${token}`).join('; ') });

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
    expect((await service.request('GET', '/api/me', { headers: cookies(user, admin) })).json).toMatchObject({ user: { role: 'user' } });
    expect((await service.request('GET', '/api/me', { headers: cookies(admin, user) })).json).toMatchObject({ user: { role: 'admin' } });
  });

  it('answers 401 invalid session when none names a live session', async () => {
    const service = await start();
    const reply = await service.request('GET', '/api/me', { headers: cookies(crypto.randomUUID(), '', crypto.randomUUID()) });
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

describe('POST /api/logout', () => {
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
    const reply = await service.request('POST', '/api/logout', { headers: { cookie: `token=${token}`, 'content-type': 'application/json' }, body: '{not json' });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true });
    expect((await service.me(token)).status).toBe(401);
  });

  it.each([['http://evil.example'], ['another port of this host'], ['null']])(
    'answers a page of another origin (%s) the same 200 {ok: true}, but ends nothing and deletes no cookie',
    async (origin) => {
      const service = await start();
      const token = await signIn(service);
      const { port } = new URL(service.url);
      const foreign = origin === 'another port of this host' ? `http://127.0.0.1:${Number(port) + 1}` : origin;
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

describe('pages', () => {
  function expectRedirectToLogin(reply: Reply) {
    expect(reply.status).toBe(302);
    expect(reply.headers.location).toBe('/login');
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.text).not.toContain('<div id="root">');
    expect(reply.text).not.toContain('<script');
  }

  it('redirects /dashboard to /login without a cookie, with no page content', async () => {
    const service = await start();
    expectRedirectToLogin(await service.dashboard());
  });

  it('redirects /dashboard to /login for an unknown token', async () => {
    const service = await start();
    expectRedirectToLogin(await service.dashboard(crypto.randomUUID()));
  });

  it('redirects /dashboard to /login once the session has expired', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3600);
    expectRedirectToLogin(await service.dashboard(token));
  });

  it('guards /dashboard however the path is spelled', async () => {
    const service = await start();
    expectRedirectToLogin(await service.page('/dashboard?x=1'));
    // Routing is strict and case-sensitive: other spellings are no page at all, and nothing of the page is sent.
    for (const path of ['/dashboard/', '/DASHBOARD']) {
      const other = await service.page(path);
      expect(other.status).toBe(404);
      expect(other.json).toEqual({ error: 'not found' });
    }
  });

  it('serves the page at /dashboard with a valid session, never stored', async () => {
    const service = await start();
    const reply = await service.dashboard(await signIn(service, ADMIN));
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.text).toContain('<div id="root">');
  });

  it('serves /login: a Japanese document that loads only from its own origin', async () => {
    const service = await start();
    const reply = await service.page('/login');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    const html = reply.text;
    expect(html).toMatch(/<html lang="ja">/);
    const references = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    const assets = references.filter((reference) => reference.startsWith('/assets/'));
    expect(assets.length).toBeGreaterThanOrEqual(1); // the script (the stylesheet is in the document)
    for (const asset of assets) {
      const file = await service.page(asset);
      expect(file.status).toBe(200);
      expect(file.headers['cache-control']).toContain('immutable');
    }
    expect(references.filter((reference) => !assets.includes(reference))).toEqual(['data:,']);
  });

  it('redirects / to /dashboard', async () => {
    const service = await start();
    const reply = await service.page('/');
    expect(reply.status).toBe(302);
    expect(reply.headers.location).toBe('/dashboard');
  });

  it.each([['/index.html'], ['/assets/missing.js'], ['/nothing'], ['/login/extra']])(
    'answers %s with 404 {error: "not found"}, as the API does',
    async (path) => {
      const service = await start();
      const reply = await service.request('GET', path);
      expect(reply.status).toBe(404);
      expect(reply.json).toEqual({ error: 'not found' });
    },
  );

  it('answers a page with another method 405 {error} with Allow', async () => {
    const service = await start();
    const reply = await service.request('POST', '/login', { json: USER });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toContain('GET');
    expect(reply.json).toEqual({ error: 'method not allowed' });
  });
});

describe('requests no route takes under /api', () => {
  it.each([
    ['GET', '/api/nothing'],
    ['POST', '/api/users'],
    ['GET', '/api'],
    ['DELETE', '/api/login/extra'],
    ['GET', '/api/me/'],
  ])('answers %s %s with 404 {error}', async (method, path) => {
    const service = await start();
    const reply = await service.request(method, path);
    expect(reply.status).toBe(404);
    expect(reply.json).toEqual({ error: 'not found' });
  });

  it.each([
    ['GET', '/api/login', 'POST'],
    ['PUT', '/api/login', 'POST'],
    ['DELETE', '/api/me', 'GET'],
    ['POST', '/api/me', 'GET'],
    ['GET', '/api/logout', 'POST'],
    ['OPTIONS', '/api/login', 'POST'],
    ['OPTIONS', '/api/me', 'GET'],
  ])('answers %s %s with 405 {error} and Allow naming %s', async (method, path, allowed) => {
    const service = await start();
    const reply = await service.request(method, path);
    expect(reply.status).toBe(405);
    expect(String(reply.headers.allow).split(/,\s*/)).toContain(allowed);
    expect(reply.json).toEqual({ error: 'method not allowed' });
    expect(setCookies(reply)).toEqual([]);
  });
});

describe('security headers', () => {
  it('sends a same-origin Content-Security-Policy and helmet’s headers with the pages', async () => {
    const service = await start();
    const token = await signIn(service);
    for (const reply of [await service.page('/login'), await service.page('/dashboard', { cookie: `token=${token}` })]) {
      const csp = reply.headers['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      // The page's own stylesheet, inlined by the build, allowed by its hash; no other inline style.
      expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('answers the API with a policy that allows nothing, never stored, sniffed or framed', async () => {
    const service = await start();
    const signedIn = await signIn(service);
    for (const reply of [await service.me(signedIn), await service.me(), await service.request('GET', '/api/unknown')]) {
      expect(reply.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['strict-transport-security']).toBeUndefined();
    }
  });
});

describe('request log', () => {
  it('logs each request by method, path and status, never its password or session token', async () => {
    const service = await start();
    service.logs.clear(); // what start-up itself asked (the OpenAPI document)
    const token = await signIn(service);
    await service.me(token);
    await service.login({ email: USER.email, password: 'a-wrong-guess' });
    expect(service.logs.lines.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'POST', path: '/api/login', status: 200 },
      { method: 'GET', path: '/api/me', status: 200 },
      { method: 'POST', path: '/api/login', status: 401 },
    ]);
    const logged = JSON.stringify(service.logs.lines);
    for (const secret of [USER.password, 'a-wrong-guess', token]) expect(logged).not.toContain(secret);
  });
});

describe('production mode', () => {
  const production = { NODE_ENV: 'production', AUTH_USER_PASSWORD: 'a-long-secret-1', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' };

  it('marks the cookie and its deletion Secure', async () => {
    const service = await start(production);
    const reply = await service.login({ email: USER.email, password: 'a-long-secret-1' });
    expect(reply.status).toBe(200);
    expect(setCookies(reply)[0]).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    const logout = await service.logout(tokenFrom(reply));
    expect(setCookies(logout)).toEqual(['token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure']);
  });

  it('accepts only the configured passwords', async () => {
    const service = await start(production);
    expect((await service.login(USER)).status).toBe(401);
    expect((await service.login({ email: ADMIN.email, password: 'a-long-secret-2' })).status).toBe(200);
  });

  it('adds HSTS and upgrade-insecure-requests', async () => {
    const service = await start(production);
    const reply = await service.page('/login');
    expect(reply.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(reply.headers['content-security-policy']).toContain('upgrade-insecure-requests');
    expect((await service.me()).headers['strict-transport-security']).toMatch(/max-age=\d+/);
  });

  const documented = (variable: string) => `${variable} is a documented default password: production mode needs one of your own`;
  it.each([
    ['both default passwords', {}, [documented('AUTH_USER_PASSWORD'), documented('AUTH_ADMIN_PASSWORD')]],
    ['the default user password', { AUTH_ADMIN_PASSWORD: 'a-long-secret-2' }, [documented('AUTH_USER_PASSWORD')]],
    ['the default admin password', { AUTH_USER_PASSWORD: 'a-long-secret-1' }, [documented('AUTH_ADMIN_PASSWORD')]],
    ['each account given the other\'s default', { AUTH_USER_PASSWORD: 'admin-password', AUTH_ADMIN_PASSWORD: 'user-password' }, [documented('AUTH_USER_PASSWORD'), documented('AUTH_ADMIN_PASSWORD')]],
    ['a password shorter than 12 characters', { AUTH_USER_PASSWORD: 'short-pass1', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' }, ['AUTH_USER_PASSWORD is shorter than 12 characters: production mode needs a longer password']],
    ['a password that is the account\'s email', { AUTH_USER_PASSWORD: 'User@Example.com', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' }, ['AUTH_USER_PASSWORD is the account\'s own email: production mode needs another password']],
  ])('refuses to start with %s, one line naming each variable', (_, env, lines) => {
    expect(() => authConfig({ NODE_ENV: 'production', ...env })).toThrow(new ConfigError(lines.join('\n')));
  });
});

describe('configuration checks', () => {
  it('refuses a password hash cost that is not a power of two, in one line naming the variable', () => {
    expect(() => authConfig({ PASSWORD_HASH_COST: '1000' })).toThrow(new ConfigError('PASSWORD_HASH_COST="1000" is not valid: expected a power of two'));
  });

  it('refuses two accounts with the same email', async () => {
    const starting = startService(auth, { deps: { config: authConfig({ AUTH_ADMIN_EMAIL: 'USER@example.com' }), spa: spa() } });
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    await expect(starting).rejects.toThrow(/share the email/);
  });

  it('logs in with accounts replaced through the environment', async () => {
    const service = await start({ AUTH_ADMIN_EMAIL: 'boss@example.org', AUTH_ADMIN_PASSWORD: 'hunter2' });
    expect((await service.login(ADMIN)).status).toBe(401);
    const reply = await service.me(await signIn(service, { email: 'boss@example.org', password: 'hunter2' }));
    expect(reply.json).toEqual({ user: { id: '2', email: 'boss@example.org', role: 'admin' } });
  });
});
