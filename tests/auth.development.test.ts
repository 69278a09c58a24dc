import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/auth/app.js';
import { developmentSpa, type Spa } from '../server/auth/spa.js';
import { loadConfig } from '../server/shared/config.js';
import { createLogger } from '../server/shared/logger.js';
import type { RunningServer } from '../server/shared/serve.js';
import { serve } from './support/http.js';

// `npm run dev`: Vite in middleware mode inside Koa. The session check on /dashboard must hold
// there too. (Hot reload's socket is off here so that tests never clash with a running dev server.)
describe('development mode', () => {
  let spa: Spa;
  let server: RunningServer;

  beforeAll(async () => {
    spa = await developmentSpa({ hmr: false });
    const config = loadConfig({ NODE_ENV: 'development', PASSWORD_HASH_COST: '1024' }).auth;
    server = await serve(createApp({ config, logger: createLogger('silent'), spa }));
  });
  afterAll(async () => {
    await server?.close();
    await spa?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(server.url + path, { redirect: 'manual', headers });

  it('redirects /dashboard to /login without a session, with no page content', async () => {
    const response = await get('/dashboard');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/login');
    expect(await response.text()).not.toContain('<script');
  });

  it('serves Vite’s transformed page at /dashboard with a session', async () => {
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'user@example.com', password: 'user-password' }),
    });
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const response = await get('/dashboard', { Cookie: cookie });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const html = await response.text();
    expect(html).toContain('<html lang="ja">');
    expect(html).toContain('/@vite/client');
    expect(html).toContain('/src/main.tsx');
  });

  it('serves the modules the page loads, under a policy that allows Vite’s inline preamble', async () => {
    const page = await get('/login');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self' 'unsafe-inline'");
    const module = await get('/src/main.tsx');
    expect(module.status).toBe(200);
    expect(module.headers.get('content-type')).toMatch(/javascript/);
    expect(await module.text()).toContain('createRoot');
  });

  it('keeps API answers its own', async () => {
    const response = await get('/api/unknown');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'not found' });
  });
});
