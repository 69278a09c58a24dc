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
  if (shared) return shared;
  // Vitest stops a worker with SIGTERM and kills it half a second later. Playwright's answer to
  // SIGTERM, closing the browser gently, can take longer on a busy machine, and a killed worker
  // leaves the browser's profile folder in the temporary folder: the worker exits at once
  // instead, and Playwright's exit handler kills the browser and removes its folders.
  const exit = () => process.exit(143);
  process.once('SIGTERM', exit);
  const ended = () => {
    shared = undefined;
    process.off('SIGTERM', exit);
  };
  shared = launchBrowser({ handleSIGTERM: false }).then(
    (browser) => {
      browser.on('disconnected', ended);
      return browser;
    },
    (error: unknown) => {
      ended();
      throw error;
    },
  );
  return shared;
}
