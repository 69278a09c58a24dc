import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../harness/http.js';
import { startService, type StartedService } from '../../harness/service.js';
import { developmentSpa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { ADMIN, signIn, USER, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();
const HTML = expect.stringMatching(/^text\/html/);

describe('auth pages', () => {
  it('redirects /dashboard to /login without a live session; serves it with one', async () => {
    const service = await start();
    const token = await signIn(service);
    service.advance(3600);
    for (const [why, reply] of [
      ['no cookie', await service.dashboard()],
      ['an unknown token', await service.dashboard(crypto.randomUUID())],
      ['an expired session', await service.dashboard(token)],
      ['a query', await service.page('/dashboard?x=1')],
    ] as const) {
      const { status, headers, text } = reply;
      const redirect = [why, status, headers.location, headers['cache-control']];
      expect(redirect).toEqual([why, 302, '/login', 'no-store']);
      // No page content.
      expect(text).not.toMatch(/<div id="root">|<script/);
    }
    const page = await service.dashboard(await signIn(service, ADMIN));
    const { status, headers } = page;
    expect([status, headers['cache-control'], headers['content-type']]).toEqual([
      200,
      'no-store',
      HTML,
    ]);
    expect(page.text).toContain('<div id="root">');
  });

  it('serves /login: a Japanese document that loads only from its own origin', async () => {
    const service = await start();
    const reply = await service.page('/login');
    expect([reply.status, reply.headers['content-type']]).toEqual([200, HTML]);
    expect(reply.text).toMatch(/<html lang="ja">/);
    const references = [...reply.text.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    const assets = references.filter((reference) => reference.startsWith('/assets/'));
    // The script (the stylesheet is in the document).
    expect(assets.length).toBeGreaterThanOrEqual(1);
    for (const asset of assets) {
      const file = await service.page(asset);
      const immutable = expect.stringContaining('immutable');
      expect([file.status, file.headers['cache-control']]).toEqual([200, immutable]);
    }
    expect(references.filter((reference) => !assets.includes(reference))).toEqual(['data:,']);
  });

  it('redirects / to /dashboard; other paths and methods answer 404, 405, as the API', async () => {
    const service = await start();
    const root = await service.page('/');
    expect([root.status, root.headers.location]).toEqual([302, '/dashboard']);
    // Routing is strict and case-sensitive: other spellings are no page at all.
    const others = '/dashboard/ /DASHBOARD /index.html /assets/missing.js /nothing /login/extra';
    for (const path of others.split(' ')) {
      const reply = await service.request('GET', path);
      expect([path, reply.status, reply.json]).toEqual([path, 404, { error: 'not found' }]);
    }
    const posted = await service.request('POST', '/login', { json: USER });
    expect([posted.status, posted.json]).toEqual([405, { error: 'method not allowed' }]);
    expect(posted.headers.allow).toContain('GET');
  });
});

// `npm run dev`: the pages' modules come from Vite's dev server (scripts/dev.ts runs it). The
// session check on /dashboard must hold there too.
describe('auth pages in development mode', () => {
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
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(service.url, { method: 'GET', path, headers });

  it('sends /dashboard to /login without a session; with one, its modules from Vite', async () => {
    const anonymous = await get('/dashboard');
    expect([anonymous.status, anonymous.headers.location]).toEqual([302, '/login']);
    expect(anonymous.text).not.toContain('<script');
    const login = await service.request('POST', '/api/login', { json: USER });
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
