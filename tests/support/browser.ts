import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const EXECUTABLE = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, driven by playwright-core. Without it the browser tests skip on a
 * developer's machine, but under CI=true its absence is a failure.
 */
export const browserAvailable = existsSync(EXECUTABLE) || process.env.CI === 'true';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: EXECUTABLE,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
