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

  it('sends /dashboard to /login without a session; with one, its modules from Vite', async () => {
    const anonymous = await get('/dashboard');
    expect([anonymous.status, anonymous.headers.location]).toEqual([302, '/login']);
    expect(anonymous.text).not.toContain('<script');
    const login = await service.request('POST', '/api/login', {
      json: { email: 'user@example.com', password: 'user-password' },
    });
    expect(login.status).toBe(200);
    const reply = await get('/dashboard', { cookie: login.headers['set-cookie']![0]! });
    expect([reply.status, reply.headers['cache-control']]).toEqual([200, 'no-store']);
    for (const html of [
      '<html lang="ja">',
      `<script type="module" src="${VITE}/@vite/client"></script>`,
      `<script type="module" src="${VITE}/src/main.tsx"></script>`,
      '"user@example.com"',
    ])
      expect(reply.text).toContain(html);
  });

  it('lets Vite’s client load modules, inject styles and await its socket, no more', async () => {
    const policy = (await get('/login')).headers['content-security-policy'];
    for (const directive of [
      `script-src 'self' ${VITE};`,
      "style-src 'self' 'unsafe-inline';",
      "connect-src 'self' ws://localhost:5173;",
      "worker-src 'self' blob:;",
      "script-src-attr 'none'",
    ])
      expect(policy).toContain(directive);
  });

  it('keeps API answers its own, and a path neither Vite nor a route serves is 404', async () => {
    for (const path of ['/api/unknown', '/nothing-here']) {
      const reply = await service.request('GET', path);
      expect([path, reply.status, reply.json]).toEqual([path, 404, { error: 'not found' }]);
    }
  });
});
