import { describe, expect, it } from 'vitest';
import { setCookies, signIn, USER, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

describe('auth requests no route takes under /api', () => {
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
  ])('answers %s %s with 405 {error} and Allow naming %s', async (method, path, allowed) => {
    const service = await start();
    const reply = await service.request(method, path);
    expect(reply.status).toBe(405);
    expect(String(reply.headers.allow).split(/,\s*/)).toContain(allowed);
    expect(reply.json).toEqual({ error: 'method not allowed' });
    expect(setCookies(reply)).toEqual([]);
  });

  it.each([
    ['/api/login', 'POST'],
    ['/api/me', 'GET'],
  ])('answers OPTIONS %s with Allow naming %s', async (path, allowed) => {
    const service = await start();
    const reply = await service.request('OPTIONS', path);
    expect(reply.status).toBe(200);
    expect(String(reply.headers.allow).split(/,\s*/)).toContain(allowed);
    expect(setCookies(reply)).toEqual([]);
  });
});

describe('auth security headers', () => {
  it('sends a same-origin Content-Security-Policy and helmet’s headers with pages', async () => {
    const service = await start();
    const token = await signIn(service);
    for (const reply of [
      await service.page('/login'),
      await service.page('/dashboard', { cookie: `token=${token}` }),
    ]) {
      const csp = reply.headers['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      // The page's own stylesheet, inlined by the build, allowed by its hash; no other inline
      // style.
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

  it('answers the API with a policy allowing nothing, not stored, sniffed or framed', async () => {
    const service = await start();
    const signedIn = await signIn(service);
    for (const reply of [
      await service.me(signedIn),
      await service.me(),
      await service.request('GET', '/api/unknown'),
    ]) {
      expect(reply.headers['content-security-policy']).toBe(
        "default-src 'none'; frame-ancestors 'none'",
      );
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['strict-transport-security']).toBeUndefined();
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
