import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { CHROMIUM, launchBrowser } from '../../harness/browser.js';

export { launchBrowser } from '../../harness/browser.js';

/**
 * Without Chromium the browser tests skip on a developer's machine, but under CI=true its absence
 * is a failure.
 */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';

let shared: Promise<Browser> | undefined;

/**
 * One Chromium for every file a test worker runs (`npm test` keeps a worker's modules between its
 * files): a launch costs about a second of CPU, and what a test sees lives in its own context. The
 * files close the contexts they open; the browser ends with the worker, as playwright-core ends
 * the browsers it launched when their process exits.
 */
export function sharedBrowser(): Promise<Browser> {
  shared ??= launchBrowser().then(
    (browser) => {
      browser.on('disconnected', () => (shared = undefined));
      return browser;
    },
    (error: unknown) => {
      shared = undefined;
      throw error;
    },
  );
  return shared;
}
