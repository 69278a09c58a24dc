import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserAvailable } from '../support/browser.js';
import { ADMIN, pagesInBrowser, USER } from './pagesInBrowser.js';

describe.skipIf(!browserAvailable)('login and dashboard pages in Chromium', () => {
  const pages = pagesInBrowser();
  const { url, path, submitButton } = pages;
  const errorMessage = () => pages.page.locator('main .error');
  const input = (field: Locator, property: 'required' | 'valueMissing' | 'typeMismatch') =>
    field.evaluate((element: HTMLInputElement, name) => {
      return name === 'required' ? element.required : element.validity[name];
    }, property);
  const shown = (text: string) => pages.page.getByText(text).count();

  it('a visitor goes to the login form, which checks its fields and shows failures', async () => {
    const { page } = pages;
    const response = await page.goto(url('/dashboard'));
    expect(path(), 'a visitor on /dashboard is sent to').toBe('/login');
    expect(response?.request().redirectedFrom()?.url()).toBe(url('/dashboard'));
    await page.getByRole('heading', { name: 'ログイン' }).waitFor();
    expect(await shown('ようこそ')).toBe(0);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');

    const [email, password] = [page.getByLabel('メールアドレス'), page.getByLabel('パスワード')];
    expect(await email.getAttribute('type')).toBe('email');
    expect(await password.getAttribute('type')).toBe('password');
    const required = [await input(email, 'required'), await input(password, 'required')];
    expect(required).toEqual([true, true]);
    const sent = pages.loginRequests();
    await submitButton().click();
    expect(await input(email, 'valueMissing'), 'sent empty').toBe(true);
    await email.fill(USER.email);
    await submitButton().click();
    expect(await input(password, 'valueMissing'), 'sent without a password').toBe(true);
    await email.fill('not-an-email');
    await password.fill(USER.password);
    await submitButton().click();
    expect(await input(email, 'typeMismatch'), 'sent with not-an-email').toBe(true);
    expect(sent).toEqual([]);
    expect(path()).toBe('/login');

    // Failures the login service itself never sends come from a real proxy in front of it.
    for (const [mode, failure, message] of [
      ['forward', 'a wrong password', 'メールアドレスまたはパスワードが正しくありません'],
      ['badGateway', 'a proxy 502 without an error', 'ログインに失敗しました'],
      ['reset', 'a network failure', 'ログインに失敗しました'],
    ] as const) {
      pages.gateway.mode = mode;
      await pages.fillLogin(mode === 'forward' ? { ...USER, password: 'wrong' } : USER);
      await submitButton().click();
      await errorMessage().waitFor();
      expect(await errorMessage().textContent(), failure).toBe(message);
      // Under the form: after it in the document.
      expect(await page.locator('form ~ .error').count(), failure).toBe(1);
      expect(path(), failure).toBe('/login');
      expect(await submitButton().getAttribute('aria-disabled'), failure).toBeNull();
      expect(await submitButton().textContent(), failure).toBe('ログイン');
    }
  });

  it(
    'one request per login; the dashboard per role; a logout signs out every tab',
    async () => {
      const { page, context } = pages;
      pages.gateway.mode = 'hold';
      const sent = pages.loginRequests();
      await pages.fillLogin(USER);
      await submitButton().click();
      const running = page.getByRole('button', { name: 'ログイン中…', disabled: true });
      // Disabled as assistive technology sees it (the accessibility tree), keeping the focus.
      await running.waitFor();
      // Playwright waits for an aria-disabled button to be enabled: these press it regardless.
      await submitButton().click({ force: true });
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      const focused = submitButton().evaluate((button) => button === document.activeElement);
      expect(await focused).toBe(true);
      expect(sent).toHaveLength(1);
      pages.gateway.mode = 'forward';
      pages.gateway.release();
      await page.waitForURL(url('/dashboard'));
      await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
      expect(await page.title()).toBe('ダッシュボード');
      expect(await shown(`ようこそ、${USER.email} さん`)).toBe(1);
      expect(await shown('ロール: 一般ユーザー (user)')).toBe(1);
      expect(await page.getByRole('button', { name: 'ログアウト' }).count()).toBe(1);
      for (const admin of ['管理メニュー', 'ユーザ管理', 'システム設定'])
        expect(await shown(admin), `the user: ${admin}`).toBe(0);
      await page.getByRole('button', { name: 'ログアウト' }).click();
      await page.waitForURL(url('/login'));

      await pages.logIn(ADMIN);
      expect(await shown(`ようこそ、${ADMIN.email} さん`)).toBe(1);
      expect(await shown('ロール: 管理者 (admin)')).toBe(1);
      const menu = page.getByRole('region', { name: '管理メニュー' });
      const items = await menu.getByRole('listitem').allTextContents();
      expect(items, 'the admin').toEqual(['ユーザ管理', 'システム設定']);
      const links = menu
        .getByRole('link')
        .evaluateAll((all) => all.map((a) => a.getAttribute('href')));
      expect(await links).toEqual(['/admin/users', '/admin/settings']);

      const other = await pages.watchedPage(context);
      await other.goto(url('/dashboard'));
      await other.getByRole('heading', { name: '管理メニュー' }).waitFor();
      await page.getByRole('button', { name: 'ログアウト' }).click();
      await page.waitForURL(url('/login'));
      // The session cookie is gone; the device cookie of the login throttling stays, as it should.
      expect((await context.cookies()).map((cookie) => cookie.name)).toEqual(['device']);
      await other.waitForURL(url('/login'));
      expect(await other.getByText(ADMIN.email).count(), 'the other tab').toBe(0);
      expect(await other.getByText('管理メニュー').count(), 'the other tab').toBe(0);
      await page.goBack();
      await page.getByRole('heading', { name: 'ログイン' }).waitFor();
      expect(path(), 'Back').toBe('/login');
      expect(await shown('管理メニュー'), 'Back').toBe(0);
      await page.goto(url('/dashboard'));
      expect(path(), 'a direct visit').toBe('/login');
      expect(await shown('ようこそ'), 'a direct visit').toBe(0);
    },
    // Two tests' steps in one: their time too.
    60_000,
  );

  it('a planted token cookie first keeps the session; an ended one goes to /login', async () => {
    const { page, context } = pages;
    // A browser sends the cookie of the longer path first: these reach /dashboard and /api/me
    // ahead of the session's.
    const domain = new URL(pages.gateway.url).hostname;
    const planted = (path: string) => ({ name: 'token', value: 'planted', domain, path });
    await context.addCookies(['/api', '/dashboard'].map(planted));
    const dashboard = page.waitForRequest((request) => request.url().endsWith('/dashboard'));
    await pages.signIn(USER);
    const plantedFirst = /^token=planted; token=[0-9a-f-]{36}$/;
    expect(await (await dashboard).headerValue('cookie')).toMatch(plantedFirst);
    expect(await shown(`ようこそ、${USER.email} さん`)).toBe(1);

    // The page's own check of the session, when the tab comes back, sees the same order.
    const me = page.waitForResponse((response) => response.url().endsWith('/api/me'));
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    expect((await me).status()).toBe(200);
    expect(await (await me).request().headerValue('cookie')).toMatch(plantedFirst);
    expect(path()).toBe('/dashboard');
    await page.reload();
    await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
    expect(path()).toBe('/dashboard');
    expect(await shown(`ようこそ、${USER.email} さん`)).toBe(1);

    // Without the planted cookies, from here on.
    await context.clearCookies();
    const comingBack = {
      'shown again': () => document.dispatchEvent(new Event('visibilitychange')),
      focused: () => window.dispatchEvent(new Event('focus')),
    };
    for (const [how, comeBack] of Object.entries(comingBack)) {
      await pages.signIn(USER);
      pages.advance(3600 * 1000);
      try {
        await page.evaluate(comeBack);
        await expect
          .poll(() => path(), { message: `the tab ${how}`, timeout: 10_000 })
          .toBe('/login');
      } finally {
        pages.advance(-3600 * 1000);
      }
    }
  });

  it('without JavaScript: the form says it needs it; the dashboard is in the HTML', async () => {
    const noScript = await pages.browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await noScript.newPage();
      await page.goto(url('/login'));
      expect(await page.title()).toBe('ログイン');
      expect(await page.getByLabel('メールアドレス').isVisible()).toBe(true);
      expect(await page.getByLabel('パスワード').isVisible()).toBe(true);
      // (Playwright's text queries skip <noscript>, whose content only shows without script.)
      const notice = page.locator('noscript .notice');
      expect(await notice.isVisible()).toBe(true);
      expect(await notice.textContent()).toContain('ログインには JavaScript が必要です');
      // The form cannot be sent by the browser itself: the password never travels in a URL.
      expect(await submitButton(page).isDisabled()).toBe(true);

      // Signed in through the API, whose cookies the context shares.
      const login = await noScript.request.post(url('/api/login'), { data: ADMIN });
      expect(login.status()).toBe(200);
      await page.goto(url('/dashboard'));
      expect(await page.title(), 'the dashboard').toBe('ダッシュボード');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('ダッシュボード');
      for (const visible of [
        page.getByText(`ようこそ、${ADMIN.email} さん`),
        page.getByText('ロール: 管理者 (admin)'),
        page.getByRole('region', { name: '管理メニュー' }),
        page.getByRole('button', { name: 'ログアウト' }),
      ])
        expect(await visible.isVisible(), String(visible)).toBe(true);
    } finally {
      await noScript.close();
    }
  });
});
