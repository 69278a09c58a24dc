import { describe, expect, it } from 'vitest';
import { browserAvailable } from '../support/browser.js';
import { ADMIN, pagesInBrowser, USER } from './pagesInBrowser.js';

describe.skipIf(!browserAvailable)('login and dashboard pages in Chromium', () => {
  const pages = pagesInBrowser();
  const { url, path } = pages;
  const submitButton = () => pages.page.locator('form button[type="submit"]');
  const errorMessage = () => pages.page.locator('main .error');

  it(
    'sends a visitor without a session from /dashboard to /login, whose form requires both ' +
      'fields, typed as email and password, before sending anything, and shows under it what ' +
      'went wrong: the server’s message for a wrong password, 「ログインに失敗しました」 for a ' +
      'proxy 502 without an error and when the network fails',
    async () => {
      const { page } = pages;
      const response = await page.goto(url('/dashboard'));
      expect(path(), 'a visitor on /dashboard is sent to').toBe('/login');
      expect(response?.request().redirectedFrom()?.url()).toBe(url('/dashboard'));
      await page.getByRole('heading', { name: 'ログイン' }).waitFor();
      expect(await page.getByText('ようこそ').count()).toBe(0);
      expect(await page.getAttribute('html', 'lang')).toBe('ja');

      const email = page.getByLabel('メールアドレス');
      const password = page.getByLabel('パスワード');
      expect(await email.getAttribute('type')).toBe('email');
      expect(await password.getAttribute('type')).toBe('password');
      expect(await email.evaluate((input: HTMLInputElement) => input.required)).toBe(true);
      expect(await password.evaluate((input: HTMLInputElement) => input.required)).toBe(true);

      const loginRequests: string[] = [];
      page.on(
        'request',
        (request) => request.url().endsWith('/api/login') && loginRequests.push(request.url()),
      );
      await submitButton().click();
      expect(
        await email.evaluate((input: HTMLInputElement) => input.validity.valueMissing),
        'sent empty',
      ).toBe(true);
      await email.fill(USER.email);
      await submitButton().click();
      expect(
        await password.evaluate((input: HTMLInputElement) => input.validity.valueMissing),
        'sent without a password',
      ).toBe(true);
      await email.fill('not-an-email');
      await password.fill(USER.password);
      await submitButton().click();
      expect(
        await email.evaluate((input: HTMLInputElement) => input.validity.typeMismatch),
        'sent with not-an-email',
      ).toBe(true);

      expect(loginRequests).toEqual([]);
      expect(path()).toBe('/login');

      await pages.fillLogin({ email: USER.email, password: 'wrong-password' });
      await submitButton().click();
      await errorMessage().waitFor();
      expect(await errorMessage().textContent(), 'a wrong password').toBe(
        'メールアドレスまたはパスワードが正しくありません',
      );
      // Under the form: after it in the document.
      expect(await pages.page.locator('form ~ .error').count()).toBe(1);
      expect(path()).toBe('/login');
      expect(await submitButton().getAttribute('aria-disabled')).toBeNull();
      expect(await submitButton().textContent()).toBe('ログイン');

      // Failures the login service itself never sends, produced by a real proxy in front of it.
      for (const [mode, failure] of [
        ['badGateway', 'a proxy 502 without an error'],
        ['reset', 'a network failure'],
      ] as const) {
        pages.gateway.mode = mode;
        await pages.fillLogin(USER);
        await submitButton().click();
        await errorMessage().waitFor();
        expect(await errorMessage().textContent(), failure).toBe('ログインに失敗しました');
        expect(path(), failure).toBe('/login');
        expect(await submitButton().getAttribute('aria-disabled'), failure).toBeNull();
      }
    },
  );

  it(
    'marks the button disabled with a progress label while the login runs, and sends one ' +
      'request however often it is pressed; then shows the user’s email and role in words, and ' +
      'no admin menu; logged in as the admin, the admin menu with its two items, links to their ' +
      'pages',
    async () => {
      const { page } = pages;
      pages.gateway.mode = 'hold';
      const loginRequests: string[] = [];
      page.on(
        'request',
        (request) => request.url().endsWith('/api/login') && loginRequests.push(request.url()),
      );
      await pages.fillLogin(USER);
      await submitButton().click();
      await page.waitForFunction(
        () => document.querySelector('form button')?.textContent === 'ログイン中…',
      );
      // Disabled as assistive technology sees it (the accessibility tree), while keeping the focus.
      expect(await page.getByRole('button', { name: 'ログイン中…', disabled: true }).count()).toBe(
        1,
      );
      // Playwright waits for an aria-disabled button to be enabled: these press it regardless.
      await submitButton().click({ force: true });
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      expect(await submitButton().evaluate((button) => button === document.activeElement)).toBe(
        true,
      );
      expect(loginRequests).toHaveLength(1);
      pages.gateway.mode = 'forward';
      pages.gateway.release();
      await page.waitForURL(url('/dashboard'));
      await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
      expect(await page.title()).toBe('ダッシュボード');
      expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);
      expect(await page.getByText('ロール: 一般ユーザー (user)').count()).toBe(1);
      expect(await page.getByRole('button', { name: 'ログアウト' }).count()).toBe(1);
      expect(await page.getByText('管理メニュー').count(), 'the user').toBe(0);
      expect(await page.getByText('ユーザ管理').count(), 'the user').toBe(0);
      expect(await page.getByText('システム設定').count(), 'the user').toBe(0);
      await page.getByRole('button', { name: 'ログアウト' }).click();
      await page.waitForURL(url('/login'));

      await pages.logIn(ADMIN);
      expect(await page.getByText(`ようこそ、${ADMIN.email} さん`).count()).toBe(1);
      expect(await page.getByText('ロール: 管理者 (admin)').count()).toBe(1);
      const menu = page.getByRole('region', { name: '管理メニュー' });
      expect(await menu.getByRole('listitem').allTextContents(), 'the admin').toEqual([
        'ユーザ管理',
        'システム設定',
      ]);
      expect(
        await menu
          .getByRole('link')
          .evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
      ).toEqual(['/admin/users', '/admin/settings']);
    },
  );

  it(
    'logs out every open tab when one logs out, to /login; Back and a direct visit to ' +
      '/dashboard both end on /login',
    async () => {
      const { page, context } = pages;
      await pages.signIn(ADMIN);
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
      expect(await page.getByText('管理メニュー').count(), 'Back').toBe(0);

      await page.goto(url('/dashboard'));
      expect(path(), 'a direct visit').toBe('/login');
      expect(await page.getByText('ようこそ').count(), 'a direct visit').toBe(0);
    },
  );

  it(
    'stays signed in when a token cookie planted for a narrower path comes first; goes to ' +
      '/login when the tab is shown again, and when it is focused, and /api/me answers 401 ' +
      '(session expired)',
    async () => {
      const { page, context } = pages;
      // A browser sends the cookie of the longer path first: these reach /dashboard and /api/me
      // ahead of the session's.
      const domain = new URL(pages.gateway.url).hostname;
      await context.addCookies(
        ['/api', '/dashboard'].map((cookiePath) => ({
          name: 'token',
          value: 'planted',
          domain,
          path: cookiePath,
        })),
      );
      const dashboard = page.waitForRequest(
        (request) => new URL(request.url()).pathname === '/dashboard',
      );
      await pages.signIn(USER);
      expect(await (await dashboard).headerValue('cookie')).toMatch(
        /^token=planted; token=[0-9a-f-]{36}$/,
      );
      expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);

      // The page's own check of the session, when the tab comes back, sees the same order.
      const me = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/me');
      await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
      expect((await me).status()).toBe(200);
      expect(await (await me).request().headerValue('cookie')).toMatch(
        /^token=planted; token=[0-9a-f-]{36}$/,
      );
      expect(path()).toBe('/dashboard');

      await page.reload();
      await page.getByRole('heading', { name: 'ダッシュボード' }).waitFor();
      expect(path()).toBe('/dashboard');
      expect(await page.getByText(`ようこそ、${USER.email} さん`).count()).toBe(1);

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
    },
  );

  it(
    'without JavaScript: shows the login form, saying it needs it, sending nothing; and a ' +
      'signed-in dashboard from its HTML alone: email, role, admin menu and title',
    async () => {
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
        expect(await page.locator('form button[type="submit"]').isDisabled()).toBe(true);

        // Signed in through the API, whose cookies the context shares.
        expect((await noScript.request.post(url('/api/login'), { data: ADMIN })).status()).toBe(
          200,
        );
        await page.goto(url('/dashboard'));
        expect(await page.title(), 'the dashboard').toBe('ダッシュボード');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('ダッシュボード');
        expect(await page.getByText(`ようこそ、${ADMIN.email} さん`).isVisible()).toBe(true);
        expect(await page.getByText('ロール: 管理者 (admin)').isVisible()).toBe(true);
        expect(await page.getByRole('region', { name: '管理メニュー' }).isVisible()).toBe(true);
        expect(await page.getByRole('button', { name: 'ログアウト' }).isVisible()).toBe(true);
      } finally {
        await noScript.close();
      }
    },
  );
});
