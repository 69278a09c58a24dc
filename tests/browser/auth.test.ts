import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/auth/index.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/shared/config.js';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { startGateway, type Gateway } from '../support/gateway.js';

const USER = { email: 'user@example.com', password: 'user-password' };
const ADMIN = { email: 'admin@example.com', password: 'admin-password' };

describe.skipIf(!browserAvailable)('login and dashboard pages in Chromium', () => {
  let spa: Spa;
  let service: StartedService<AuthDeps>;
  /** The pages are opened through this proxy, so that tests can make the API fail as proxies do. */
  let gateway: Gateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let time = Date.now();
  /** Every URL the page asked for, to show that nothing comes from another host. */
  let requested: string[];
  let policyViolations: string[];

  beforeAll(async () => {
    await ensureSpaBuilt();
    spa = await builtSpa();
    const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024' }).auth;
    service = await startService(auth, { deps: { config, spa, now: () => time } });
    gateway = await startGateway(service.url);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await service?.close();
    await spa?.close();
    // What the pages did never made the service fail.
    expect(service?.logs.errors()).toEqual([]);
  });

  beforeEach(async () => {
    gateway.mode = 'forward';
    context = await browser.newContext();
    page = await context.newPage();
    requested = [];
    policyViolations = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
    });
  });
  afterEach(async () => {
    await context.close();
    expect(policyViolations).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(`${gateway.url}/`) && !url.startsWith('data:'))).toEqual([]);
  });

  const url = (path: string) => gateway.url + path;
  const path = () => new URL(page.url()).pathname;
  const submitButton = () => page.locator('form button[type="submit"]');
  const alertText = () => page.getByRole('alert').textContent();

  async function fillLogin({ email, password }: { email: string; password: string }) {
    await page.goto(url('/login'));
    await page.getByLabel('メールアドレス').fill(email);
    await page.getByLabel('パスワード').fill(password);
  }

  async function logIn(credentials: { email: string; password: string }) {
    await fillLogin(credentials);
    await submitButton().click();
    await page.waitForURL(url('/dashboard'));
    await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
  }

  it('sends a visitor without a session from /dashboard to /login', async () => {
    const response = await page.goto(url('/dashboard'));
    expect(path()).toBe('/login');
    expect(response?.request().redirectedFrom()?.url()).toBe(url('/dashboard'));
    await page.getByRole('heading', { name: 'ログイン' }).waitFor();
    expect(await page.getByText('ようこそ').count()).toBe(0);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
  });

  it('requires both fields, typed as email and password, before sending anything', async () => {
    await page.goto(url('/login'));
    const email = page.getByLabel('メールアドレス');
    const password = page.getByLabel('パスワード');
    expect(await email.getAttribute('type')).toBe('email');
    expect(await password.getAttribute('type')).toBe('password');
    expect(await email.evaluate((input: HTMLInputElement) => input.required)).toBe(true);
    expect(await password.evaluate((input: HTMLInputElement) => input.required)).toBe(true);

    const loginRequests: string[] = [];
    page.on('request', (request) => request.url().endsWith('/api/login') && loginRequests.push(request.url()));
    await submitButton().click();
    expect(await email.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    await email.fill(USER.email);
    await submitButton().click();
    expect(await password.evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true);
    await email.fill('not-an-email');
    await password.fill(USER.password);
    await submitButton().click();
    expect(await email.evaluate((input: HTMLInputElement) => input.validity.typeMismatch)).toBe(true);

    expect(loginRequests).toEqual([]);
    expect(path()).toBe('/login');
  });

  it('shows the server’s message under the form for a wrong password', async () => {
    await fillLogin({ email: USER.email, password: 'wrong-password' });
    await submitButton().click();
    await page.getByRole('alert').waitFor();
    expect(await alertText()).toBe('メールアドレスまたはパスワードが正しくありません');
    expect(path()).toBe('/login');
    expect(await submitButton().isEnabled()).toBe(true);
    expect(await submitButton().textContent()).toBe('ログイン');
  });

  // Failures the login service itself never sends, produced by a real proxy in front of it.
  it('shows 「ログインに失敗しました」 for a 502 from a proxy, whose body has no error', async () => {
    gateway.mode = 'badGateway';
    await fillLogin(USER);
    await submitButton().click();
    await page.getByRole('alert').waitFor();
    expect(await alertText()).toBe('ログインに失敗しました');
    expect(path()).toBe('/login');
  });

  it('shows 「ログインに失敗しました」 when the network fails', async () => {
    gateway.mode = 'reset';
    await fillLogin(USER);
    await submitButton().click();
    await page.getByRole('alert').waitFor();
    expect(await alertText()).toBe('ログインに失敗しました');
    expect(await submitButton().isEnabled()).toBe(true);
  });

  it('disables the button with a progress label while the login runs', async () => {
    gateway.mode = 'hold';
    await fillLogin(USER);
    await submitButton().click();
    await page.waitForFunction(() => document.querySelector('form button')?.textContent === 'ログイン中…');
    expect(await submitButton().isDisabled()).toBe(true);
    gateway.release();
    await page.waitForURL(url('/dashboard'));
  });

  it('logs in as the user: email and role, and no admin menu', async () => {
    await logIn(USER);
    expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);
    expect(await page.getByText('ロール: user').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'ログアウト' }).count()).toBe(1);
    expect(await page.getByText('管理メニュー').count()).toBe(0);
    expect(await page.getByText('ユーザ管理').count()).toBe(0);
    expect(await page.getByText('システム設定').count()).toBe(0);
  });

  it('logs in as the admin: the admin menu with its two items', async () => {
    await logIn(ADMIN);
    expect(await page.getByText(`ようこそ、${ADMIN.email} さん`).count()).toBe(1);
    expect(await page.getByText('ロール: admin').count()).toBe(1);
    const menu = page.getByRole('region', { name: '管理メニュー' });
    expect(await menu.getByRole('listitem').allTextContents()).toEqual(['ユーザ管理', 'システム設定']);
  });

  it('logs out to /login; Back and a direct visit to /dashboard both end on /login', async () => {
    await logIn(ADMIN);
    await page.getByRole('button', { name: 'ログアウト' }).click();
    await page.waitForURL(url('/login'));
    // The session cookie is gone; the device cookie of the login throttling stays, as it should.
    expect((await context.cookies()).map((cookie) => cookie.name)).toEqual(['device']);

    await page.goBack();
    await page.getByRole('heading', { name: 'ログイン' }).waitFor();
    expect(path()).toBe('/login');
    expect(await page.getByText('管理メニュー').count()).toBe(0);

    await page.goto(url('/dashboard'));
    expect(path()).toBe('/login');
    expect(await page.getByText('ようこそ').count()).toBe(0);
  });

  it('stays signed in when a token cookie planted for a narrower path is sent before the real one', async () => {
    // A browser sends the cookie of the longer path first: these reach /api/me and /dashboard ahead of the session's.
    const domain = new URL(gateway.url).hostname;
    await context.addCookies(['/api', '/dashboard'].map((cookiePath) => ({ name: 'token', value: 'planted', domain, path: cookiePath })));
    const me = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/me');
    await logIn(USER);
    expect(await (await me).request().headerValue('cookie')).toMatch(/^token=planted; token=[0-9a-f-]{36}$/);
    expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);

    await page.reload();
    await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
    expect(path()).toBe('/dashboard');
    expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);
  });

  it('goes to /login when /api/me answers 401 on the dashboard (session expired)', async () => {
    await logIn(USER);
    time += 3600 * 1000;
    try {
      // The page asks /api/me again whenever it comes back into view.
      await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
      await page.waitForURL(url('/login'));
    } finally {
      time -= 3600 * 1000;
    }
  });
});
