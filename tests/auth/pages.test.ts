import { describe, expect, it } from 'vitest';
import type { Reply } from '../../harness/http.js';
import { ADMIN, signIn, USER, useAuthService } from '../support/authClient.js';

const { start } = useAuthService();

describe('auth pages', () => {
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
    // Routing is strict and case-sensitive: other spellings are no page at all, and nothing of the
    // page is sent.
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
    // The script (the stylesheet is in the document).
    expect(assets.length).toBeGreaterThanOrEqual(1);
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
