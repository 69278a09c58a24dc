import { existsSync } from 'node:fs';
import { CHROMIUM } from '../../harness/browser.js';

export { launchBrowser } from '../../harness/browser.js';

/** Without Chromium the browser tests skip on a developer's machine; under CI=true, they fail. */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true';
