import { describe, expect, it } from 'vitest';
import { browserAvailable } from '../support/browser.js';
import { ADMIN, pagesInBrowser, USER } from './pagesInBrowser.js';

// The administrators' pages and ending sessions, as a person does it in Chromium: every check
// the page relies on is the server's (the role at each request, the session at each page).

describe.skipIf(!browserAvailable)('sessions that can be seen and ended, in Chromium', () => {
  const pages = pagesInBrowser();
  const { url } = pages;

  it('admin pages: a visitor to /login, a user 403; the user ends other browsers', async () => {
    const { page } = pages;
    const other = await pages.otherBrowser(USER);
    for (const path of ['/admin/users', '/admin/settings']) {
      await page.goto(url(path));
      expect(pages.path(), `a visitor on ${path} is sent to`).toBe('/login');
    }
    await pages.signIn(USER);
    for (const path of ['/admin/users', '/admin/settings']) {
      expect((await page.goto(url(path)))?.status(), `the user on ${path}`).toBe(403);
      expect(await page.getByRole('heading', { level: 1 }).textContent(), path).toBe(
        'このページを表示する権限がありません',
      );
      expect(await page.getByText(ADMIN.email).count(), path).toBe(0);
    }
    await page.getByRole('link', { name: 'ダッシュボードに戻る' }).click();
    await page.waitForURL(url('/dashboard'));

    await page.getByRole('button', { name: 'ほかの端末のセッションを終了' }).click();
    await pages.announced('ほかの端末の 1 件のセッションを終了しました');
    await other.reload();
    expect(pages.path(other), 'the other browser').toBe('/login');
    await page.reload();
    expect(pages.path(), 'this browser').toBe('/dashboard');
  });

  it(
    'the admin reads the settings, ends sessions, and unblocks a locked account',
    async () => {
      const { page } = pages;
      const [first, second] = [await pages.otherBrowser(USER), await pages.otherBrowser(USER)];
      await pages.signIn(ADMIN);
      await page.getByRole('link', { name: 'システム設定' }).click();
      await page.waitForURL(url('/admin/settings'));
      const setting = (name: string) =>
        page
          .locator('.settings div', { has: page.getByText(name, { exact: true }) })
          .locator('dd')
          .textContent();
      for (const [name, value] of [
        ['セッションの保存先 (SESSION_STORE)', 'プロセスのメモリー (memory)'],
        ['セッションの有効期間 (SESSION_TTL_SECONDS)', '3600 秒'],
        ['ログイン失敗の上限: アカウントと接続元ごと', '900 秒に 5 回'],
        [
          'ログイン失敗の上限: 接続元ごと (すべてのアカウントと未登録のメールアドレス)',
          '900 秒に 50 回',
        ],
        ['接続元ごとの待機できるログイン試行 (プロセスごと)', '32 件まで'],
        ['信頼済み端末の有効期間 (DEVICE_TRUST_DAYS)', '90 日'],
        ['監査ログの保存期間 (AUDIT_RETENTION_DAYS)', '30 日'],
        ['監査ログの最大件数 (AUDIT_MAX_EVENTS)', '100,000'],
        [
          '監査ログに 1 件ずつ記録するイベント: 種類と接続元ごと',
          '60 秒に 5 件まで (超えた分は件数だけ記録)',
        ],
      ])
        expect(await setting(name), name).toBe(value);
      expect(await page.locator('input, textarea, select').count()).toBe(0);
      expect(await page.content()).not.toContain(ADMIN.password);

      await page.goto(url('/dashboard'));
      await page.getByRole('link', { name: 'ユーザ管理' }).click();
      await page.waitForURL(url('/admin/users'));
      expect(await page.title()).toBe('ユーザ管理');
      const userSessions = page.getByRole('table', { name: `${USER.email} のセッション` });
      const rows = await userSessions.getByRole('row').count();
      const adminSessions = page.getByRole('table', { name: `${ADMIN.email} のセッション` });
      expect(await adminSessions.getByText('この端末').count()).toBe(1);
      expect(await page.content()).not.toMatch(
        /token=|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"\s*\}/,
      );

      // Sessions are listed oldest first: the second browser's is the last.
      await userSessions.getByRole('button', { name: '終了' }).last().click();
      await pages.announced('1 件のセッションを終了しました');
      expect(
        rows === 2
          ? await page.getByText('ログイン中のセッションはありません').count()
          : await userSessions.getByRole('row').count(),
        'the sessions listed after ending one',
      ).toBe(rows === 2 ? 1 : rows - 1);
      await second.goto(url('/dashboard'));
      expect(pages.path(second), 'the browser whose session ended').toBe('/login');

      await page.goto(url('/admin/users'));
      const account = page.locator('section', {
        has: page.getByRole('heading', { name: USER.email }),
      });
      await account.getByRole('button', { name: 'すべて終了' }).click();
      await pages.announced(/\d+ 件のセッションを終了しました/);
      expect(await account.getByText('ログイン中のセッションはありません').count()).toBe(1);
      await first.reload();
      expect(pages.path(first), 'the first browser, after ending them all').toBe('/login');
      await page.goto(url('/dashboard'));
      expect(pages.path(), "the admin's own session").toBe('/dashboard');

      await pages.lock(USER);
      await page.goto(url('/admin/users'));
      const shown = (text: string | RegExp, within = account) => within.getByText(text).count();
      expect(await shown('ログイン失敗が多すぎるため、ブロックされています'), 'locked').toBe(1);
      expect(await shown(/^信頼済みでない端末すべて: 100 回失敗、あと \d+ 秒$/)).toBe(1);
      const events = account.getByRole('table', { name: `${USER.email} の最近のイベント` });
      // The right password from a new address, refused, and the wrong ones before it.
      expect(await shown('ログイン制限による拒否 (login.throttled)', events)).toBe(1);
      expect(await shown('reason: wrong password', events)).toBe(19);

      await account.getByRole('button', { name: 'ブロック解除' }).click();
      await pages.announced('ブロックを解除しました');
      expect(await shown('ブロックされていません'), 'unblocked').toBe(1);
      expect(await account.getByRole('button', { name: 'ブロック解除' }).count()).toBe(0);
      expect(await shown('ブロック解除 (account.unlocked)', events)).toBe(1);
      // Blocked, this login would be refused (429) and stay on /login.
      const third = await pages.otherBrowser(USER);
      await third.getByRole('button', { name: 'ログアウト' }).click();
      await third.waitForURL(url('/login'));
    },
    // Four tests' steps in one (17 s at a load average of 9 to 12 on two cores): their time too.
    90_000,
  );
});
