import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../harness/http.js';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/auth/index.js';
import { developmentSpa, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/shared/config.js';

// `npm run dev`: Vite in middleware mode inside Koa. The session check on /dashboard must hold
// there too. (Hot reload's socket is off here so that tests never clash with a running dev server.)
describe('development mode', () => {
  let spa: Spa;
  let service: StartedService<AuthDeps>;

  beforeAll(async () => {
    spa = await developmentSpa();
    const config = loadConfig({ NODE_ENV: 'development', PASSWORD_HASH_COST: '1024' }).auth;
    service = await startService(auth, { deps: { config, spa } });
  });
  afterAll(async () => {
    await service?.close();
    await spa?.close();
    expect(service?.logs.errors()).toEqual([]);
  });

  /** A page or a module, as the browser asks for it; redirects are not followed. */
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(service.url, { method: 'GET', path, headers });

  it('redirects /dashboard to /login without a session, with no page content', async () => {
    const reply = await get('/dashboard');
    expect(reply.status).toBe(302);
    expect(reply.headers.location).toBe('/login');
    expect(reply.text).not.toContain('<script');
  });

  it('serves Vite’s transformed page at /dashboard with a session', async () => {
    const login = await service.request('POST', '/api/login', {
      json: { email: 'user@example.com', password: 'user-password' },
    });
    expect(login.status).toBe(200);
    const cookie = login.headers['set-cookie']![0]!.split(';')[0]!;
    const reply = await get('/dashboard', { cookie });
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.text).toContain('<html lang="ja">');
    expect(reply.text).toContain('/@vite/client');
    expect(reply.text).toContain('/src/main.tsx');
  });

  it('serves the modules the page loads, under a policy that allows Vite’s inline preamble', async () => {
    const page = await get('/login');
    expect(page.headers['content-security-policy']).toContain("script-src 'self' 'unsafe-inline'");
    const module = await get('/src/main.tsx');
    expect(module.status).toBe(200);
    expect(module.headers['content-type']).toMatch(/javascript/);
    expect(module.text).toContain('createRoot');
  });

  it('keeps API answers its own', async () => {
    const reply = await service.request('GET', '/api/unknown');
    expect(reply.status).toBe(404);
    expect(reply.json).toEqual({ error: 'not found' });
  });

  it('answers a path neither Vite nor a route serves 404 {error}', async () => {
    const reply = await service.request('GET', '/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.json).toEqual({ error: 'not found' });
  });
});
