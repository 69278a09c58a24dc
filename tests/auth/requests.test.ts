import { describe, expect, it } from 'vitest';
import { setCookies, signIn, USER, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

const NOT_FOUND = { error: 'not found' };
const allowed = (allow: string | string[] | undefined) => String(allow).split(/,\s*/);

describe('auth requests no route takes under /api', () => {
  it('answers 404 {error} to a path; 405 {error} with Allow to a method; OPTIONS', async () => {
    const service = await start();
    const unknown = ['GET /api/nothing', 'POST /api/users', 'GET /api', 'DELETE /api/login/extra'];
    for (const [method, path] of [...unknown, 'GET /api/me/'].map((line) => line.split(' '))) {
      const reply = await service.request(method!, path!);
      expect([method, path, reply.status, reply.json]).toEqual([method, path, 404, NOT_FOUND]);
    }
    const notAllowed = [405, { error: 'method not allowed' }];
    for (const [method, path, allow, ...answer] of [
      ['GET', '/api/login', 'POST', ...notAllowed],
      ['PUT', '/api/login', 'POST', ...notAllowed],
      ['DELETE', '/api/me', 'GET', ...notAllowed],
      ['POST', '/api/me', 'GET', ...notAllowed],
      ['GET', '/api/logout', 'POST', ...notAllowed],
      ['OPTIONS', '/api/login', 'POST', 200, undefined],
      ['OPTIONS', '/api/me', 'GET', 200, undefined],
    ] as [string, string, string, number, unknown][]) {
      const reply = await service.request(method, path);
      expect([method, path, reply.status, reply.json]).toEqual([method, path, ...answer]);
      expect(allowed(reply.headers.allow)).toContain(allow);
      expect(setCookies(reply)).toEqual([]);
    }
  });
});

describe('auth security headers', () => {
  it('pages: a same-origin policy, helmet’s headers; the API: a policy of nothing', async () => {
    const service = await start();
    const token = await signIn(service);
    const helmet = {
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    };
    for (const page of [
      await service.page('/login'),
      await service.page('/dashboard', { cookie: `token=${token}` }),
    ]) {
      const csp = page.headers['content-security-policy'] ?? '';
      const directives = ["default-src 'self'", "script-src 'self';", "object-src 'none'"];
      for (const directive of [...directives, "frame-ancestors 'none'"])
        expect(csp).toContain(directive);
      // The page's own stylesheet, inlined by the build, allowed by its hash; no other inline
      // style.
      expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
      expect(csp).not.toMatch(/unsafe-inline|upgrade-insecure-requests/);
      expect(page.headers).toMatchObject(helmet);
      expect(page.headers['strict-transport-security']).toBeUndefined();
    }
    // Not stored, sniffed or framed.
    for (const api of [
      await service.me(token),
      await service.me(),
      await service.request('GET', '/api/unknown'),
    ]) {
      expect(api.headers).toMatchObject({
        ...helmet,
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        'cache-control': 'no-store',
      });
      expect(api.headers['strict-transport-security']).toBeUndefined();
    }
  });
});

describe('auth request log', () => {
  it('logs each request by method, path and status, never a password or a token', async () => {
    const service = await start();
    service.logs.clear(); // what start-up itself asked (the OpenAPI document)
    const token = await signIn(service);
    await service.me(token);
    await service.login({ email: USER.email, password: 'a-wrong-guess' });
    const requestLines = service.logs.lines.filter((line) => line.method !== undefined);
    expect(requestLines.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'POST', path: '/api/login', status: 200 },
      { method: 'GET', path: '/api/me', status: 200 },
      { method: 'POST', path: '/api/login', status: 401 },
    ]);
    const logged = JSON.stringify(service.logs.lines);
    for (const secret of [USER.password, 'a-wrong-guess', token])
      expect(logged).not.toContain(secret);
  });
});
