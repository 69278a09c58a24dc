import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../tests/support/browser.js';
import { ROOT } from './services.js';
import type { SpaReport } from './results.js';


/**
 * A fresh production build of the pages (`vite build` with the project's config, into a folder
 * of its own so that `dist/web`, which the running service serves, is left alone) and the size
 * of its JavaScript, raw and gzipped.
 */
export async function measureBundle(): Promise<Omit<SpaReport, 'timeToInteractiveMs'>> {
  const outDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-pages-'));
  try {
    await viteBuild(outDir);
    return await javascriptSizes(outDir);
  } finally {
    await fs.rm(outDir, { recursive: true, force: true });
  }
}

async function viteBuild(outDir: string): Promise<void> {
  const { build } = await import('vite');
  // Vite sets NODE_ENV for its build when it is unset; the benchmark's own stays as it was.
  const nodeEnv = process.env.NODE_ENV;
  try {
    await build({ configFile: path.join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

async function javascriptSizes(dir: string): Promise<Omit<SpaReport, 'timeToInteractiveMs'>> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = await Promise.all(
    entries
      .filter((entry) => entry.isFile() && /\.m?js$/.test(entry.name))
      .map(async (entry) => {
        const file = path.join(entry.parentPath, entry.name);
        const content = await fs.readFile(file);
        return { file: path.relative(dir, file), rawBytes: content.length, gzipBytes: gzipSync(content).length };
      }),
  );
  return {
    files,
    rawBytes: files.reduce((sum, file) => sum + file.rawBytes, 0),
    gzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0),
  };
}

declare global {
  interface Window {
    __benchInteractiveAt?: number;
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

async function loadOnce(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const failed = new Promise<never>((_, reject) =>
      page.once('pageerror', (error) => reject(new Error(`the login page failed: ${error.message}`))),
    );
    failed.catch(() => undefined);
    await page.addInitScript(() => {
      const observer = new MutationObserver(() => {
        const email = document.querySelector('form input[type="email"]');
        const button = document.querySelector<HTMLButtonElement>('form button');
        if (!email || !button || button.disabled) return;
        observer.disconnect();
        setTimeout(() => (window.__benchInteractiveAt ??= performance.now()), 0);
      });
      observer.observe(document, { childList: true, subtree: true, attributes: true });
    });
    await Promise.race([page.goto(url), failed]);
    await Promise.race([
      page.waitForFunction(() => window.__benchInteractiveAt !== undefined, undefined, { timeout: 15_000 }),
      failed,
    ]);
    return await page.evaluate(() => window.__benchInteractiveAt!);
  } finally {
    await context.close();
  }
}
