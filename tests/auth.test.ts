import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/auth/app.js';
import { messages } from '../server/auth/messages.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../server/auth/spa.js';
import { ConfigError, loadConfig } from '../server/shared/config.js';
import { createLogger } from '../server/shared/logger.js';
import type { RunningServer } from '../server/shared/serve.js';
import { serve } from './support/http.js';

const USER = { email: 'user@example.com', password: 'user-password' };
const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const START = Date.parse('2030-01-01T00:00:00Z');
const logger = createLogger('silent');

let spa: Spa;
const servers: RunningServer[] = [];

beforeAll(async () => {
  await ensureSpaBuilt();
  spa = await builtSpa();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(() => spa.close());

/** The real app over HTTP, on a clock the test moves (`advance(seconds)`). */
async function start(env: Record<string, string> = {}) {
  let time = START;
  const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024', ...env }).auth;
  const server = await serve(createApp({ config, logger, spa, now: () => time }));
  servers.push(server);
  const { url } = server;

  const request = (path: string, init: RequestInit = {}) => fetch(url + path, { redirect: 'manual', ...init });
  const withToken = (token: string | undefined, headers: Record<string, string> = {}) =>
    token === undefined ? headers : { ...headers, Cookie: `token=${token}` };

  return {
    url,
    advance: (seconds: number) => void (time += seconds * 1000),
    request,
    postLogin: (body: string, headers: Record<string, string> = {}) =>
      request('/api/login', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }),
    login: (credentials: { email: string; password: string }, token?: string) =>
      request('/api/login', {
        method: 'POST',
        headers: withToken(token, { 'Content-Type': 'application/json' }),
        body: JSON.stringify(credentials),
      }),
    me: (token?: string) => request('/api/me', { headers: withToken(token) }),
    logout: (token?: string, headers: Record<string, string> = {}) =>
      request('/api/logout', { method: 'POST', headers: withToken(token, headers) }),
    dashboard: (token?: string) => request('/dashboard', { headers: withToken(token) }),
  };
}

type Service = Awaited<ReturnType<typeof start>>;

function tokenFrom(response: Response): string {
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('token='));
  const token = /^token=([^;]*)/.exec(cookie ?? '')?.[1];
  if (!token) throw new Error(`no token cookie in ${JSON.stringify(response.headers.getSetCookie())}`);
  return token;
}

async function signIn(service: Service, credentials = USER): Promise<string> {
  const response = await service.login(credentials);
  expect(response.status).toBe(200);
  return tokenFrom(response);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /api/login', () => {
  it('answers {ok: true} with the session cookie, exactly as the spec lists it', async () => {
    const service = await start();
    const response = await service.login(USER);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    const [cookie, ...others] = response.headers.getSetCookie();
    expect(others).toEqual([]);
    expect(cookie).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(tokenFrom(response)).toMatch(UUID);
  });

  it('logs in either account, and /api/me then returns it', async () => {
    const service = await start();
    for (const [credentials, id, role] of [
      [USER, '1', 'user'],
      [ADMIN, '2', 'admin'],
    ] as const) {
      const response = await service.me(await signIn(service, credentials));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ user: { id, email: credentials.email, role } });
    }
  });

  it('matches the email whatever its letter case', async () => {
    const service = await start();
    const response = await service.login({ email: 'User@Example.COM', password: USER.password });
    expect(response.status).toBe(200);
  });

  it.each([
    ['a wrong password', { email: USER.email, password: 'admin-password' }],
    ['an unknown email', { email: 'nobody@example.com', password: USER.password }],
    ['a password with different letter case', { email: USER.email, password: 'USER-PASSWORD' }],
  ])('answers 401 with the spec message and sets no cookie for %s', async (_, credentials) => {
    const service = await start();
    const response = await service.login(credentials);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'メールアドレスまたはパスワードが正しくありません' });
    expect(response.headers.getSetCookie()).toEqual([]);
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
    const response = await service.login(ADMIN, old);
    expect(response.status).toBe(200);
    const fresh = tokenFrom(response);
    expect(fresh).not.toBe(old);
    expect(await (await service.me(old)).json()).toEqual({ error: 'invalid session' });
    expect((await (await service.me(fresh)).json()).user.role).toBe('admin');
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
    const response = await service.postLogin(body, { 'Content-Type': contentType });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: messages.invalidLoginBody });
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it('answers 413 {error} for a body over 16 KiB, and accepts one just under', async () => {
    const service = await start();
    const padded = (size: number) => {
      const base = JSON.stringify({ ...USER, padding: '' });
      return JSON.stringify({ ...USER, padding: 'x'.repeat(size - base.length) });
    };
    const tooLarge = await service.postLogin(padded(16 * 1024 + 1));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ error: messages.bodyTooLarge });
    expect((await service.postLogin(padded(16 * 1024))).status).toBe(200);
  });

  it.each([['http://evil.example'], ['https://127.0.0.1.evil.example'], ['null']])(
    'answers 403 {error} when Origin is %s',
    async (origin) => {
      const service = await start();
      const response = await service.postLogin(JSON.stringify(USER), { Origin: origin });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: messages.foreignOrigin });
      expect(response.headers.getSetCookie()).toEqual([]);
    },
  );

  it('accepts an Origin naming this service', async () => {
    const service = await start();
    const response = await service.postLogin(JSON.stringify(USER), { Origin: service.url });
    expect(response.status).toBe(200);
  });

  it('answers 405 {error} to other methods', async () => {
    const service = await start();
    const response = await service.request('/api/login');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('POST');
    expect(await response.json()).toEqual({ error: 'method not allowed' });
  });
});

describe('login throttling', () => {
  const fail = (service: Service, email = USER.email) => service.login({ email, password: 'wrong' });

  it('blocks an email after 10 failures in 15 minutes, even with the right password, until the window frees', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await fail(service)).status).toBe(401);
      service.advance(1);
    }
    const blocked = await service.login(USER);
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toEqual({ error: messages.tooManyAttempts });
    // The first failure, 10 s ago, leaves the 15-minute window in 890 s.
    expect(blocked.headers.get('retry-after')).toBe('890');
    expect(blocked.headers.getSetCookie()).toEqual([]);

    service.advance(889);
    expect((await service.login(USER)).status).toBe(429);
    service.advance(1);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('counts attempts still being checked, so parallel guesses cannot pass the limit', async () => {
    const service = await start();
    const answers = await Promise.all(Array.from({ length: 20 }, () => fail(service)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(10).fill(429)]);
  });

  it('does not count successes against the client address', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 40; attempt++) expect((await service.login(USER)).status).toBe(200);
    for (let attempt = 1; attempt <= 10; attempt++) expect((await fail(service, ADMIN.email)).status).toBe(401);
  });

  it('counts each email on its own', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service);
    expect((await service.login(USER)).status).toBe(429);
    expect((await service.login(ADMIN)).status).toBe(200);
  });

  it('counts emails whatever their letter case as one', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service, attempt % 2 ? 'USER@example.com' : USER.email);
    expect((await service.login(USER)).status).toBe(429);
  });

  it('resets an email’s count on success', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 9; attempt++) await fail(service);
    expect((await service.login(USER)).status).toBe(200);
    for (let attempt = 1; attempt <= 10; attempt++) expect((await fail(service)).status).toBe(401);
    expect((await fail(service)).status).toBe(429);
  });

  it('blocks a client address after 30 failures over any emails', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 30; attempt++) {
      expect((await fail(service, `guess${attempt}@example.com`)).status).toBe(401);
    }
    const blocked = await service.login(ADMIN);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toBe('900');
    service.advance(900);
    expect((await service.login(ADMIN)).status).toBe(200);
  });

  it('does not count requests it refused as failures', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service);
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
    const response = await service.me();
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'unauthenticated' });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 401 unauthenticated for an empty token cookie', async () => {
    const service = await start();
    expect(await (await service.me('')).json()).toEqual({ error: 'unauthenticated' });
  });

  it('answers 401 invalid session for a token not in the table', async () => {
    const service = await start();
    const response = await service.me(crypto.randomUUID());
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid session' });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('is never stored by caches', async () => {
    const service = await start();
    const response = await service.me(await signIn(service));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('ends a session 3600 s after login', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3599);
    expect((await service.me(token)).status).toBe(200);
    service.advance(1);
    const response = await service.me(token);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid session' });
  });

  it('follows SESSION_TTL_SECONDS for both the session and the cookie', async () => {
    const service = await start({ SESSION_TTL_SECONDS: '60' });
    const response = await service.login(USER);
    expect(response.headers.getSetCookie()[0]).toContain('; Max-Age=60;');
    service.advance(60);
    expect((await service.me(tokenFrom(response))).status).toBe(401);
  });

  it('keeps at most SESSION_MAX sessions, ending the oldest first', async () => {
    const service = await start({ SESSION_MAX: '2' });
    const [first, second, third] = [await signIn(service), await signIn(service), await signIn(service, ADMIN)];
    expect(await (await service.me(first)).json()).toEqual({ error: 'invalid session' });
    expect((await service.me(second)).status).toBe(200);
    expect((await service.me(third)).status).toBe(200);
  });
});

describe('POST /api/logout', () => {
  const DELETION = 'token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax';

  it('ends the session and deletes the cookie', async () => {
    const service = await start();
    const token = await signIn(service);
    const response = await service.logout(token);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(response.headers.getSetCookie()).toEqual([DELETION]);
    expect(await (await service.me(token)).json()).toEqual({ error: 'invalid session' });
    expect((await service.dashboard(token)).status).toBe(302);
  });

  it.each([
    ['no cookie', undefined],
    ['an unknown token', crypto.randomUUID()],
    ['an empty token', ''],
  ])('answers the same with %s', async (_, token) => {
    const service = await start();
    const response = await service.logout(token);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(response.headers.getSetCookie()).toEqual([DELETION]);
  });

  it('answers the same to a foreign Origin or a body, and still ends the session', async () => {
    const service = await start();
    const token = await signIn(service);
    const response = await service.request('/api/logout', {
      method: 'POST',
      headers: { Cookie: `token=${token}`, Origin: 'http://evil.example', 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
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
  async function expectRedirectToLogin(response: Response) {
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/login');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await response.text();
    expect(body).not.toContain('<div id="root">');
    expect(body).not.toContain('<script');
  }

  it('redirects /dashboard to /login without a cookie, with no page content', async () => {
    const service = await start();
    await expectRedirectToLogin(await service.dashboard());
  });

  it('redirects /dashboard to /login for an unknown token', async () => {
    const service = await start();
    await expectRedirectToLogin(await service.dashboard(crypto.randomUUID()));
  });

  it('redirects /dashboard to /login once the session has expired', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3600);
    await expectRedirectToLogin(await service.dashboard(token));
  });

  it('guards /dashboard however the path is spelled', async () => {
    const service = await start();
    for (const path of ['/dashboard/', '/DASHBOARD', '/dashboard?x=1']) {
      await expectRedirectToLogin(await service.request(path));
    }
  });

  it('serves the page at /dashboard with a valid session, never stored', async () => {
    const service = await start();
    const response = await service.dashboard(await signIn(service, ADMIN));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toContain('<div id="root">');
  });

  it('serves /login: a Japanese document that loads only from its own origin', async () => {
    const service = await start();
    const response = await service.request('/login');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/<html lang="ja">/);
    const references = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    const assets = references.filter((reference) => reference.startsWith('/assets/'));
    expect(assets.length).toBeGreaterThanOrEqual(2); // the script and the stylesheet
    for (const asset of assets) {
      const response = await service.request(asset);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toContain('immutable');
    }
    expect(references.filter((reference) => !assets.includes(reference))).toEqual(['data:,']);
  });

  it('redirects / to /dashboard', async () => {
    const service = await start();
    const response = await service.request('/');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/dashboard');
  });

  it('answers 404 for other paths, including the built index.html', async () => {
    const service = await start();
    expect((await service.request('/index.html')).status).toBe(404);
    expect((await service.request('/assets/missing.js')).status).toBe(404);
  });
});

describe('unknown /api paths', () => {
  it.each([['GET', '/api/nothing'], ['POST', '/api/users'], ['GET', '/api'], ['DELETE', '/api/login/extra']])(
    'answers %s %s with 404 {error}',
    async (method, path) => {
      const service = await start();
      const response = await service.request(path, { method });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'not found' });
    },
  );
});

describe('security headers', () => {
  it('sends a same-origin Content-Security-Policy and helmet’s headers with the pages', async () => {
    const service = await start();
    for (const response of [await service.request('/login'), await service.request('/dashboard')]) {
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("style-src 'self';");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('strict-transport-security')).toBeNull();
    }
  });

  it('answers the API with a policy that allows nothing, never stored, sniffed or framed', async () => {
    const service = await start();
    const signedIn = tokenFrom(await service.login(USER));
    for (const response of [await service.me(signedIn), await service.me(), await service.request('/api/unknown')]) {
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('strict-transport-security')).toBeNull();
    }
  });
});

describe('production mode', () => {
  const production = { NODE_ENV: 'production', AUTH_USER_PASSWORD: 'a-long-secret-1', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' };

  it('marks the cookie and its deletion Secure', async () => {
    const service = await start(production);
    const response = await service.login({ email: USER.email, password: 'a-long-secret-1' });
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()[0]).toMatch(/^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    const logout = await service.logout(tokenFrom(response));
    expect(logout.headers.getSetCookie()).toEqual(['token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure']);
  });

  it('accepts only the configured passwords', async () => {
    const service = await start(production);
    expect((await service.login(USER)).status).toBe(401);
    expect((await service.login({ email: ADMIN.email, password: 'a-long-secret-2' })).status).toBe(200);
  });

  it('adds HSTS and upgrade-insecure-requests', async () => {
    const service = await start(production);
    const response = await service.request('/login');
    expect(response.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    expect(response.headers.get('content-security-policy')).toContain('upgrade-insecure-requests');
    expect((await service.me()).headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
  });

  it.each([
    ['both default passwords', { NODE_ENV: 'production' }],
    ['the default user password', { NODE_ENV: 'production', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' }],
    ['the default admin password', { NODE_ENV: 'production', AUTH_USER_PASSWORD: 'a-long-secret-1' }],
  ])('refuses to start with %s', (_, env) => {
    const config = loadConfig({ PASSWORD_HASH_COST: '1024', ...env }).auth;
    expect(() => createApp({ config, logger, spa })).toThrow(ConfigError);
    expect(() => createApp({ config, logger, spa })).toThrow(/default account password/);
  });
});

describe('configuration checks', () => {
  it('refuses a password hash cost that is not a power of two', () => {
    const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1000' }).auth;
    expect(() => createApp({ config, logger, spa })).toThrow(ConfigError);
  });

  it('refuses two accounts with the same email', () => {
    const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024', AUTH_ADMIN_EMAIL: 'USER@example.com' }).auth;
    expect(() => createApp({ config, logger, spa })).toThrow(/share the email/);
  });

  it('logs in with accounts replaced through the environment', async () => {
    const service = await start({ AUTH_ADMIN_EMAIL: 'boss@example.org', AUTH_ADMIN_PASSWORD: 'hunter2' });
    expect((await service.login(ADMIN)).status).toBe(401);
    const response = await service.me(await signIn(service, { email: 'boss@example.org', password: 'hunter2' }));
    expect(await response.json()).toEqual({ user: { id: '2', email: 'boss@example.org', role: 'admin' } });
  });
});
