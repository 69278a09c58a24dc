import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../harness/http.js';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { developmentSpa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';

// `npm run dev`: the pages' modules come from Vite's dev server (scripts/dev.ts runs it). The
// session check on /dashboard must hold there too.
describe('development mode', () => {
  const VITE = 'http://localhost:5173';
  let service: StartedService<AuthDeps>;

  beforeAll(async () => {
    const config = loadConfig({ NODE_ENV: 'development', PASSWORD_HASH_COST: '1024' }).auth;
    service = await startService(auth, { deps: { config, spa: developmentSpa(VITE) } });
  });
  afterAll(async () => {
    await service?.close();
    expect(service?.logs.errors()).toEqual([]);
  });

  /** A page, as the browser asks for it; redirects are not followed. */
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(service.url, { method: 'GET', path, headers });

  it('redirects /dashboard to /login without a session, with no page content', async () => {
    const reply = await get('/dashboard');
    expect(reply.status).toBe(302);
    expect(reply.headers.location).toBe('/login');
    expect(reply.text).not.toContain('<script');
  });

  it('serves /dashboard with a session, its modules from Vite', async () => {
    const login = await service.request('POST', '/api/login', {
      json: { email: 'user@example.com', password: 'user-password' },
    });
    expect(login.status).toBe(200);
    const cookie = login.headers['set-cookie']![0]!.split(';')[0]!;
    const reply = await get('/dashboard', { cookie });
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.text).toContain('<html lang="ja">');
    expect(reply.text).toContain(`<script type="module" src="${VITE}/@vite/client"></script>`);
    expect(reply.text).toContain(`<script type="module" src="${VITE}/src/main.tsx"></script>`);
    expect(reply.text).toContain('"user@example.com"');
  });

  it('lets Vite’s client load modules, inject styles and await its socket, no more', async () => {
    const policy = (await get('/login')).headers['content-security-policy'];
    expect(policy).toContain(`script-src 'self' ${VITE};`);
    expect(policy).toContain("style-src 'self' 'unsafe-inline';");
    expect(policy).toContain("connect-src 'self' ws://localhost:5173;");
    expect(policy).toContain("worker-src 'self' blob:;");
    expect(policy).toContain("script-src-attr 'none'");
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
