import { describe, expect, it } from 'vitest';
import { ADMIN, signIn, USER, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

describe('auth pages', () => {
  it(
    'redirects /dashboard to /login, never stored and with no page content, without a ' +
      'cookie, for an unknown token, once the session has expired, however the path is ' +
      'spelled; serves it with a valid session, never stored',
    async () => {
      const service = await start();
      const token = await signIn(service);
      service.advance(3600);
      for (const [why, reply] of [
        ['no cookie', await service.dashboard()],
        ['an unknown token', await service.dashboard(crypto.randomUUID())],
        ['an expired session', await service.dashboard(token)],
        ['a query', await service.page('/dashboard?x=1')],
      ] as const) {
        expect([why, reply.status, reply.headers.location]).toEqual([why, 302, '/login']);
        expect([why, reply.headers['cache-control']]).toEqual([why, 'no-store']);
        expect(reply.text).not.toMatch(/<div id="root">|<script/);
      }
      const page = await service.dashboard(await signIn(service, ADMIN));
      expect([page.status, page.headers['cache-control']]).toEqual([200, 'no-store']);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<div id="root">');
    },
  );

  it('serves /login: a Japanese document that loads only from its own origin', async () => {
    const service = await start();
    const reply = await service.page('/login');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    const html = reply.text;
    expect(html).toMatch(/<html lang="ja">/);
    const references = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    const assets = references.filter((reference) => reference.startsWith('/assets/'));
    // The script (the stylesheet is in the document).
    expect(assets.length).toBeGreaterThanOrEqual(1);
    for (const asset of assets) {
      const file = await service.page(asset);
      expect(file.status).toBe(200);
      expect(file.headers['cache-control']).toContain('immutable');
    }
    expect(references.filter((reference) => !assets.includes(reference))).toEqual(['data:,']);
  });

  it(
    'redirects / to /dashboard; answers any other path, or a page with another method, ' +
      'as the API does: 404, 405 with Allow',
    async () => {
      const service = await start();
      const root = await service.page('/');
      expect([root.status, root.headers.location]).toEqual([302, '/dashboard']);
      // Routing is strict and case-sensitive: other spellings are no page at all.
      for (const path of [
        '/dashboard/',
        '/DASHBOARD',
        '/index.html',
        '/assets/missing.js',
        '/nothing',
        '/login/extra',
      ]) {
        const reply = await service.request('GET', path);
        expect([path, reply.status, reply.json]).toEqual([path, 404, { error: 'not found' }]);
      }
      const posted = await service.request('POST', '/login', { json: USER });
      expect([posted.status, posted.json]).toEqual([405, { error: 'method not allowed' }]);
      expect(posted.headers.allow).toContain('GET');
    },
  );
});
