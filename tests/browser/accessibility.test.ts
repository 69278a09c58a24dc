import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserAvailable } from '../support/browser.js';
import { ADMIN, pagesInBrowser, USER } from './pagesInBrowser.js';

type Scheme = 'light' | 'dark';
const SCHEMES: Scheme[] = ['light', 'dark'];

/** WCAG's contrast ratio of two `rgb(…)` colours as getComputedStyle writes them. */
function contrast(first: string, second: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = color
      .match(/[\d.]+/g)!
      .slice(0, 3)
      .map((value) => {
        const channel = Number(value) / 255;
        return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [light, dark] = [luminance(first), luminance(second)].sort((a, b) => b - a);
  return (light! + 0.05) / (dark! + 0.05);
}

/** The focused control's ring, and the colour behind it (its nearest opaque ancestor's). */
function focusRing(control: Locator) {
  return control.evaluate((element) => {
    const style = getComputedStyle(element);
    let behind = element.parentElement;
    while (behind && /rgba\(.*, 0\)|transparent/.test(getComputedStyle(behind).backgroundColor))
      behind = behind.parentElement;
    return {
      style: style.outlineStyle,
      width: parseFloat(style.outlineWidth),
      color: style.outlineColor,
      behind: getComputedStyle(behind ?? document.documentElement).backgroundColor,
    };
  });
}

describe.skipIf(!browserAvailable)('accessibility of the pages in Chromium', () => {
  const pages = pagesInBrowser();
  const { submitButton } = pages;
  const focused = (control: Locator) =>
    control.evaluate((element) => element === document.activeElement);

  it(
    'follows the dark theme; rings focus at 3:1; moves focus and announces',
    async () => {
      const { page } = pages;
      const colours = () =>
        page.evaluate(() => {
          const card = getComputedStyle(document.querySelector('main')!);
          return {
            page: getComputedStyle(document.documentElement).backgroundColor,
            card: card.backgroundColor,
            text: card.color,
          };
        });
      const checkRings = async (scheme: Scheme, controls: Locator[]) => {
        await page.emulateMedia({ colorScheme: scheme });
        for (const control of controls) {
          await control.focus();
          const ring = await focusRing(control);
          const what = `${scheme}: ${await control.evaluate((element) => element.outerHTML)}`;
          expect(ring.style, what).toBe('solid');
          expect(ring.width, what).toBeGreaterThanOrEqual(2);
          expect(
            contrast(ring.color, ring.behind),
            `${what}: ${ring.color} on ${ring.behind}`,
          ).toBeGreaterThanOrEqual(3);
        }
      };

      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(pages.url('/login'));
      const light = await colours();
      await page.emulateMedia({ colorScheme: 'dark' });
      const dark = await colours();
      expect(light).toEqual({
        page: 'rgb(243, 245, 248)',
        card: 'rgb(255, 255, 255)',
        text: 'rgb(31, 41, 51)',
      });
      expect(dark).toEqual({
        page: 'rgb(15, 20, 26)',
        card: 'rgb(26, 32, 41)',
        text: 'rgb(230, 233, 238)',
      });
      expect(contrast(dark.text, dark.card)).toBeGreaterThanOrEqual(4.5);

      // Through the keyboard, as :focus-visible shows the ring for it.
      await page.keyboard.press('Tab');
      const fields = [page.getByLabel('メールアドレス'), page.getByLabel('パスワード')];
      for (const scheme of SCHEMES) await checkRings(scheme, [...fields, submitButton()]);

      await page.emulateMedia({ colorScheme: 'light', forcedColors: 'active' });
      for (const control of [fields[0]!, submitButton()]) {
        await control.focus();
        const ring = await focusRing(control);
        expect(ring.style, 'in forced-colours mode').toBe('solid');
        expect(ring.width, 'in forced-colours mode').toBeGreaterThanOrEqual(2);
      }
      await page.emulateMedia({ colorScheme: 'light', forcedColors: 'none' });

      // After a failed login: the focus on the first field, the message tied to the fields and
      // announced; while a login runs, the focus on the button, the progress announced.
      await pages.fillLogin({ email: USER.email, password: 'wrong-password' });
      await page.getByLabel('パスワード').press('Enter');
      const message = 'メールアドレスまたはパスワードが正しくありません';
      await pages.announced(message);
      const email = page.getByLabel('メールアドレス');
      expect(await focused(email), 'the focus after a failed login').toBe(true);
      for (const field of [email, page.getByLabel('パスワード')]) {
        expect(await field.getAttribute('aria-invalid')).toBe('true');
        const described = await field.getAttribute('aria-describedby');
        expect(await page.locator(`#${described}`).textContent()).toBe(message);
      }
      // The next Tab stays in the form.
      await page.keyboard.press('Tab');
      const next = await page.evaluate(() => document.activeElement?.getAttribute('name'));
      expect(next).toBe('password');

      pages.gateway.mode = 'hold';
      await pages.fillLogin(USER);
      await submitButton().focus();
      await page.keyboard.press('Enter');
      await pages.announced('ログイン中…');
      const disabled = await submitButton().getAttribute('aria-disabled');
      expect(disabled, 'while the login runs').toBe('true');
      expect(await focused(submitButton()), 'the focus while the login runs').toBe(true);
      pages.gateway.mode = 'forward';
      pages.gateway.release();
      await page.waitForURL(pages.url('/dashboard'));

      await pages.signIn(ADMIN);
      await page.keyboard.press('Tab');
      for (const scheme of SCHEMES)
        await checkRings(scheme, [page.getByRole('button', { name: 'ログアウト' })]);
    },
    // Two tests' steps in one: their time too.
    60_000,
  );
});
