import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../harness/browser.js';
import { ROOT } from '../harness/processes.js';

/** The JavaScript of the pages, per file and in total, raw and gzipped. */
export interface SpaSize {
  files: { file: string; rawBytes: number; gzipBytes: number }[];
  rawBytes: number;
  gzipBytes: number;
}

/**
 * A fresh production build of the pages: `vite build` with the project's config, into a folder of
 * its own so that `dist/web`, which the running service serves, is left alone.
 */
export async function measureBundle(): Promise<SpaSize> {
  const outDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-pages-'));
  // Vite sets NODE_ENV for its build when it is unset; the benchmark's own stays as it was.
  const nodeEnv = process.env.NODE_ENV;
  try {
    const { build } = await import('vite');
    await build({ configFile: path.join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    const scripts = (await fs.readdir(outDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile() && /\.m?js$/.test(entry.name));
    const files = await Promise.all(
      scripts.map(async (entry) => {
        const content = await fs.readFile(path.join(entry.parentPath, entry.name));
        return { file: path.relative(outDir, path.join(entry.parentPath, entry.name)), rawBytes: content.length, gzipBytes: gzipSync(content).length };
      }),
    );
    const total = (size: 'rawBytes' | 'gzipBytes') => files.reduce((sum, file) => sum + file[size], 0);
    return { files, rawBytes: total('rawBytes'), gzipBytes: total('gzipBytes') };
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    await fs.rm(outDir, { recursive: true, force: true });
  }
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
    const failed = new Promise<never>((_, reject) => page.once('pageerror', (error) => reject(new Error(`the login page failed: ${error.message}`))));
    failed.catch(() => undefined);
    await page.addInitScript(() => {
      const observer = new MutationObserver(() => {
        const button = document.querySelector<HTMLButtonElement>('form button');
        if (!document.querySelector('form input[type="email"]') || !button || button.disabled) return;
        observer.disconnect();
        setTimeout(() => ((globalThis as Marked).interactiveAt ??= performance.now()), 0);
      });
      observer.observe(document, { childList: true, subtree: true, attributes: true });
    });
    await Promise.race([page.goto(url), failed]);
    const marked = await Promise.race([page.waitForFunction(() => (globalThis as Marked).interactiveAt, undefined, { timeout: 15_000 }), failed]);
    return (await marked.jsonValue())!;
  } finally {
    await context.close();
  }
}
