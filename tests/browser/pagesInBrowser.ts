import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { send } from '../../harness/http.js';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { launchBrowser } from '../support/browser.js';
import { startGateway, type Gateway } from '../support/gateway.js';
import { setClock } from '../support/clock.js';

export const USER = { email: 'user@example.com', password: 'user-password' };
export const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
export type Credentials = typeof USER;

/**
 * The login service with its built pages, opened in Chromium through a real proxy (so that a
 * test can make the API fail as proxies do), on a clock the tests move. Each test gets a fresh
 * browser context and page, and may open other browsers (`otherBrowser`); after each, every page
 * must have broken no Content-Security-Policy, logged no error, and asked nothing of another
 * host. Call once per file, at its top.
 *
 * A fresh context's first page costs Chromium some 1.5 CPU-seconds (a renderer to start, the
 * script to compile), each later load in it a fifth of that: a test is one visit that asserts, in
 * turn and naming each step, what a person sees along it.
 */
export function pagesInBrowser() {
  let spa: Spa;
  let service: StartedService<AuthDeps>;
  let gateway: Gateway;
  let browser: Browser;
  const current = {
    context: undefined as unknown as BrowserContext,
    page: undefined as unknown as Page,
  };
  const others: BrowserContext[] = [];
  let offsetMs = 0;
  let lockings = 0;
  let requested: string[] = [];
  let complaints: string[] = [];

  beforeAll(async () => {
    await ensureSpaBuilt();
    spa = await builtSpa();
    const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024' }).auth;
    service = await startService(auth, { deps: { config, spa } });
    gateway = await startGateway(service.url);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await service?.close();
    // What the pages did never made the service fail.
    expect(service?.logs.errors()).toEqual([]);
  });

  /** A page of its own in `context`, watched as every test's page is. */
  async function watchedPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      // A failed API call is a console error the browser writes by itself; the tests cause those on
      // purpose.
      const [text, error] = [message.text(), message.type() === 'error'];
      const expected = error && /Failed to load resource/.test(text);
      if (/Content Security Policy/i.test(text) || (error && !expected)) complaints.push(text);
    });
    page.on('pageerror', (error) => complaints.push(error.message));
    return page;
  }

  beforeEach(async () => {
    gateway.mode = 'forward';
    requested = [];
    complaints = [];
    current.context = await browser.newContext();
    current.page = await watchedPage(current.context);
  });
  afterEach(async () => {
    await Promise.all([current.context, ...others.splice(0)].map((context) => context.close()));
    expect(complaints).toEqual([]);
    expect(
      requested.filter((url) => !url.startsWith(`${gateway.url}/`) && !url.startsWith('data:')),
    ).toEqual([]);
  });

  const url = (path: string) => gateway.url + path;

  return {
    url,
    get page() {
      return current.page;
    },
    get context() {
      return current.context;
    },
    get gateway() {
      return gateway;
    },
    get browser() {
      return browser;
    },
    watchedPage,
    /** Moves the service's clock (see setClock); back to where it was, it is the real one again. */
    advance(ms: number) {
      offsetMs += ms;
      if (offsetMs === 0) vi.useRealTimers();
      else setClock(Date.now() + ms);
    },
    /**
     * Locks the account for untrusted browsers: wrong passwords, 5 from each of 20 addresses of
     * their own (never the browsers'), up to its limit of 100; then its right password from a new
     * address is refused.
     */
    async lock(credentials: Credentials) {
      const subnet = 20 + lockings++;
      const login = (password: string, address: number) =>
        send(service.url, {
          method: 'POST',
          path: '/api/login',
          json: { email: credentials.email, password },
          localAddress: `127.0.${subnet}.${address}`,
        });
      const addresses = Array.from({ length: 20 }, (_, index) => index + 1);
      await Promise.all(
        addresses.map(async (address) => {
          for (let attempt = 1; attempt <= 5; attempt++)
            expect([401, 429]).toContain((await login('wrong', address)).status);
        }),
      );
      expect((await login(credentials.password, 21)).status).toBe(429);
    },
    path: (page = current.page) => new URL(page.url()).pathname,
    /** The login form's button. */
    submitButton: (page = current.page) => page.locator('form button[type="submit"]'),
    /** Waits until the page announces `text` (a status region). */
    announced: (text: string | RegExp, page = current.page) =>
      page.getByRole('status').filter({ hasText: text }).waitFor(),
    /** The login requests the page sends from now on. */
    loginRequests(page = current.page) {
      const sent: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/login')) sent.push(request.url());
      });
      return sent;
    },
    /** Another browser, watched as the test's page is, signed in; closed after the test. */
    async otherBrowser(credentials: Credentials) {
      const context = await browser.newContext();
      others.push(context);
      const page = await watchedPage(context);
      await this.signIn(credentials, page);
      return page;
    },
    async fillLogin({ email, password }: Credentials, page = current.page) {
      await page.goto(url('/login'));
      await page.getByLabel('メールアドレス').fill(email);
      await page.getByLabel('パスワード').fill(password);
    },
    /** Logs in through the form: the page ends on the dashboard. */
    async logIn(credentials: Credentials, page = current.page) {
      await this.fillLogin(credentials, page);
      await page.locator('form button[type="submit"]').click();
      await page.waitForURL(url('/dashboard'));
      await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
    },
    /**
     * Signs in through the API, whose cookies the page's context shares, and opens the dashboard:
     * for tests whose subject is not the login form.
     */
    async signIn(credentials: Credentials, page = current.page) {
      const reply = await page.context().request.post(url('/api/login'), { data: credentials });
      expect(reply.status()).toBe(200);
      await page.goto(url('/dashboard'));
      await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
    },
  };
}

export type PagesInBrowser = ReturnType<typeof pagesInBrowser>;
