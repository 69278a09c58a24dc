import type { Browser, BrowserContext } from 'playwright-core';
import { launchBrowser } from '../harness/browser.js';
import { runLighthouse, type LighthouseRun } from './lighthouse.js';

export type { LighthouseRun } from './lighthouse.js';

/**
 * What loading a page costs on the wire: bytes transferred (compressed, headers included) by kind
 * of file.
 */
export interface PageWeight {
  page: '/login' | '/dashboard';
  documentBytes: number;
  scriptBytes: number;
  stylesheetBytes: number;
  totalBytes: number;
  /** The Content-Encoding of each text file, as `file: encoding`. */
  encodings: string[];
}

/** The pages' part of the report. */
export interface PagesReport {
  weights: PageWeight[];
  timeToInteractiveMs: number[];
  /** Lighthouse runs of each page (full runs only). */
  lighthouse: LighthouseRun[];
}

export interface Account {
  email: string;
  password: string;
}

/** The `token=…` cookie of a fresh session of `account`. */
async function sessionCookie(authUrl: string, account: Account): Promise<string> {
  const response = await fetch(`${authUrl}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(account),
  }).catch((error: Error) => {
    throw new Error(
      `logging in for the page measurements ` +
        `failed: ${(error.cause as Error | undefined)?.message ?? error.message}`,
    );
  });
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('token='));
  if (!response.ok || !cookie)
    throw new Error(`logging in for the page measurements answered ${response.status}`);
  return cookie.split(';')[0]!;
}

/**
 * Each page loaded once in headless Chromium with an empty cache (a fresh context), the
 * dashboard signed in as `account` (the admin, whose page is the larger): the bytes each kind of
 * file took on the wire, as the browser received them.
 */
export async function measurePageWeights(authUrl: string, account: Account): Promise<PageWeight[]> {
  const cookie = await sessionCookie(authUrl, account);
  const browser = await launchBrowser();
  try {
    const weights: PageWeight[] = [];
    for (const page of ['/login', '/dashboard'] as const) {
      const context = await browser.newContext();
      try {
        if (page === '/dashboard')
          await context.addCookies([
            { name: 'token', value: cookie.slice('token='.length), url: authUrl },
          ]);
        weights.push(await weighPage(context, authUrl, page));
      } finally {
        await context.close();
      }
    }
    return weights;
  } finally {
    await browser.close();
  }
}

async function weighPage(
  context: BrowserContext,
  authUrl: string,
  path: PageWeight['page'],
): Promise<PageWeight> {
  const tab = await context.newPage();
  const files: {
    kind: string;
    url: string;
    bytes: Promise<number>;
    encoding: string | undefined;
  }[] = [];
  tab.on('response', (response) => {
    const request = response.request();
    const bytes = request
      .sizes()
      .then(({ responseBodySize, responseHeadersSize }) => responseBodySize + responseHeadersSize);
    files.push({
      kind: request.resourceType(),
      url: new URL(response.url()).pathname,
      bytes,
      encoding: response.headers()['content-encoding'],
    });
  });
  await tab.goto(`${authUrl}${path}`, { waitUntil: 'networkidle' });
  if (new URL(tab.url()).pathname !== path) throw new Error(`${path} ended on ${tab.url()}`);
  const sized = await Promise.all(
    files.map(async (file) => ({ ...file, bytes: await file.bytes })),
  );
  const sum = (kind?: string) =>
    sized
      .filter((file) => kind === undefined || file.kind === kind)
      .reduce((total, file) => total + file.bytes, 0);
  return {
    page: path,
    documentBytes: sum('document'),
    scriptBytes: sum('script'),
    stylesheetBytes: sum('stylesheet'),
    totalBytes: sum(),
    encodings: sized.map((file) => `${file.url}: ${file.encoding ?? 'none'}`),
  };
}

/** `runs` Lighthouse runs of each page, one after the other (each on its own Chromium). */
export async function measureLighthouse(
  authUrl: string,
  account: Account,
  runs: number,
): Promise<LighthouseRun[]> {
  // Lighthouse counts `localhost` as a secure origin, as browsers do; 127.0.0.1 is the same server.
  const origin = authUrl.replace('//127.0.0.1:', '//localhost:');
  const results: LighthouseRun[] = [];
  for (let run = 0; run < runs; run++) {
    results.push(await runLighthouse('/login', `${origin}/login`));
    results.push(
      await runLighthouse('/dashboard', `${origin}/dashboard`, {
        Cookie: await sessionCookie(authUrl, account),
      }),
    );
  }
  return results;
}

/**
 * The login page's time to interactive in headless Chromium: from navigation start until the
 * form is on the page with its button enabled and the main thread runs the next task. Each load
 * uses a fresh browser context (empty cache); one load first warms the browser itself.
 */
export async function measureTimeToInteractive(loginUrl: string, loads: number): Promise<number[]> {
  const browser = await launchBrowser();
  try {
    await loadOnce(browser, loginUrl);
    const times: number[] = [];
    for (let load = 0; load < loads; load++) times.push(await loadOnce(browser, loginUrl));
    return times;
  } finally {
    await browser.close();
  }
}

type Marked = typeof globalThis & { interactiveAt?: number };

async function loadOnce(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const failed = new Promise<never>((_, reject) =>
      page.once('pageerror', (error) =>
        reject(new Error(`the login page failed: ${error.message}`)),
      ),
    );
    failed.catch(() => undefined);
    await page.addInitScript(() => {
      // The form is in the HTML from the start; its button is enabled once the script has hydrated
      // it.
      const observer = new MutationObserver(() => {
        const button = document.querySelector<HTMLButtonElement>('form button');
        if (!document.querySelector('form input[type="email"]') || !button || button.disabled)
          return;
        observer.disconnect();
        setTimeout(() => ((globalThis as Marked).interactiveAt ??= performance.now()), 0);
      });
      observer.observe(document, { childList: true, subtree: true, attributes: true });
    });
    await Promise.race([page.goto(url), failed]);
    const marked = await Promise.race([
      page.waitForFunction(() => (globalThis as Marked).interactiveAt, undefined, {
        timeout: 15_000,
      }),
      failed,
    ]);
    return (await marked.jsonValue())!;
  } finally {
    await context.close();
  }
}
