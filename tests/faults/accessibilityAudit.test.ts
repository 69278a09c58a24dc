import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN, pagesInBrowser, USER } from '../browser/pagesInBrowser.js';
import { browserAvailable } from '../support/browser.js';

// axe-core in every state of every page, in both themes: an audit of some thirty page states, so it
// runs here beside Lighthouse; the pages' keyboard and focus behaviours are tests/browser's.

const SCHEMES = ['light', 'dark'] as const;

describe.skipIf(!browserAvailable)('axe-core on the pages in Chromium', () => {
  const pages = pagesInBrowser();
  const submitButton = () => pages.page.locator('form button[type="submit"]');
  const status = () => pages.page.getByRole('status');

  /**
   * No axe-core violation, and one h1, in the page's present state, in either theme. Only colours
   * differ between the themes: in the dark one, axe checks the contrast alone, and only where a
   * state shows colours a later state of the same page does not show again.
   */
  async function expectAccessible(
    page: Page,
    state: string,
    schemes: readonly ('light' | 'dark')[] = SCHEMES,
  ) {
    for (const scheme of schemes) {
      await page.emulateMedia({ colorScheme: scheme });
      // The pages have no frames: axe runs in the page itself, without the blank page AxeBuilder
      // otherwise opens to merge the frames' results.
      const axe = new AxeBuilder({ page }).setLegacyMode(true);
      const { violations } = await (
        scheme === 'dark' ? axe.withRules(['color-contrast']) : axe
      ).analyze();
      expect(
        violations.map(
          ({ id, nodes }) =>
            `${state} (${scheme}): ${id} at ` +
            nodes.map((node) => node.target.join(' ')).join(', '),
        ),
      ).toEqual([]);
    }
    expect(await page.locator('h1').count(), state).toBe(1);
  }

  it('has no axe-core violation and one h1 in every state of the login page', async () => {
    const { page, gateway } = pages;
    await page.goto(pages.url('/login'));
    await expectAccessible(page, 'login', ['light']);
    gateway.mode = 'hold';
    await pages.fillLogin({ email: USER.email, password: 'wrong-password' });
    await submitButton().click();
    await status().filter({ hasText: 'ログイン中…' }).waitFor();
    await expectAccessible(page, 'logging in');
    gateway.mode = 'forward';
    gateway.release();
    await page.locator('main .error').waitFor();
    await expectAccessible(page, 'login failed');
  });

  it('has no axe-core violation and one h1 in every state of the dashboard', async () => {
    const { page, gateway } = pages;
    await pages.signIn(USER);
    await expectAccessible(page, 'dashboard of a user', ['light']);
    await pages.signIn(ADMIN);
    await expectAccessible(page, 'dashboard of an admin');
    gateway.mode = 'hold';
    await page.getByRole('button', { name: 'ログアウト' }).click();
    await status().filter({ hasText: 'ログアウト中…' }).waitFor();
    await expectAccessible(page, 'logging out');
    gateway.mode = 'forward';
    gateway.release();
    await page.waitForURL(pages.url('/login'));
    await pages.signIn(ADMIN);
    gateway.mode = 'badGateway';
    await page.getByRole('button', { name: 'ログアウト' }).click();
    await status().filter({ hasText: 'ログアウトに失敗しました' }).waitFor();
    await expectAccessible(page, 'logout failed');
    expect(await page.locator('main .error').textContent()).toBe('ログアウトに失敗しました');
  });

  it(
    'has no axe-core violation and one h1 on the ' + "administrators' pages and the forbidden page",
    async () => {
      const { page } = pages;
      await pages.signIn(ADMIN);
      await page.getByRole('button', { name: 'ほかの端末のセッションを終了' }).click();
      // Earlier tests of this file may have left the admin signed in elsewhere.
      await status()
        .filter({
          hasText:
            /ほかにログイン中の端末はありません|ほかの端末の \d+ 件のセッションを終了しました/,
        })
        .waitFor();
      await expectAccessible(page, 'dashboard, other devices signed out');
      await page.goto(pages.url('/admin/users'));
      await expectAccessible(page, 'users', ['light']);
      await page
        .locator('section', { has: page.getByRole('heading', { name: ADMIN.email }) })
        .getByRole('button', { name: 'すべて終了' })
        .waitFor();
      // The user's account blocked: its state, and the button that unblocks it.
      await pages.lock(USER);
      await page.reload();
      await expectAccessible(page, 'users, an account blocked');
      await page
        .locator('section', { has: page.getByRole('heading', { name: USER.email }) })
        .getByRole('button', { name: 'ブロック解除' })
        .click();
      await status().filter({ hasText: 'ブロックを解除しました' }).waitFor();
      await expectAccessible(page, 'users, the account unblocked');
      await page.goto(pages.url('/admin/settings'));
      await expectAccessible(page, 'settings');
      await pages.signIn(USER);
      await page.goto(pages.url('/admin/users'));
      await expectAccessible(page, 'forbidden');
    },
    // Four pages, each checked by axe-core: about 11 s alone, more beside another file.
    60_000,
  );
});
