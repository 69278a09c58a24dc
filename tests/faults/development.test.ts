import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../harness/browser.js';
import { listenOnFreePort } from '../../harness/http.js';
import { ROOT } from '../../harness/processes.js';
import { isAlive, postgresProcessesFor } from '../../harness/procfs.js';
import { browserAvailable } from '../support/browser.js';

/**
 * `npm run dev` as a developer uses it, in a copy of the repository (the test edits its files):
 * hot reload in Chromium, a server that restarts on an edit beside a database that does not, and
 * one Ctrl-C that leaves nothing behind.
 */
describe.skipIf(!browserAvailable)('npm run dev', () => {
  let copy: string;
  let browser: Browser;
  /** The dev command running now, stopped after a failed test. */
  let running: Dev | undefined;

  beforeAll(async () => {
    copy = await copyOfRepository();
    browser = await launchBrowser();
  });
  afterEach(async () => {
    if (running?.child.exitCode === null) process.kill(-running.child.pid!, 'SIGKILL');
    running = undefined;
    for (const pid of await postgresProcessesFor(copy)) process.kill(pid, 'SIGKILL');
  });
  afterAll(async () => {
    await browser?.close();
    if (copy) await fs.rm(copy, { recursive: true, force: true });
  });

  it('reloads components in place, restarts the server alone, stops on one SIGINT', async () => {
    const dev = await startDev(copy);
    running = dev;
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) refused.push(message.text());
    });
    await page.goto(`${dev.url}/login`);
    await page.waitForSelector('h1');
    // Survives hot updates; a reload of the page would lose it.
    const unreloaded = () =>
      page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded);
    await page.evaluate(() => ((window as unknown as { unreloaded: boolean }).unreloaded = true));
    const heading = () => page.locator('h1').textContent();

    await edit(copy, 'web/src/LoginPage.tsx', '<h1>{messages.loginTitle}</h1>', '<h1>One</h1>');
    await expect.poll(heading, WHILE_VITE_WORKS).toBe('One');

    const [database] = await postgresProcessesFor(copy);
    await edit(
      copy,
      'server/auth/routes/pages.ts',
      'export function',
      '// Edited.\nexport function',
    );
    const restart = await dev.line(/serving again in (\d+) ms/);
    expect(Number(restart[1])).toBeLessThanOrEqual(1_500);
    expect((await fetch(`${dev.url}/live`)).status).toBe(200);
    expect(await postgresProcessesFor(copy)).toContain(database);

    await edit(copy, 'web/src/LoginPage.tsx', '<h1>One</h1>', '<h1>Two</h1>');
    await expect.poll(heading, WHILE_VITE_WORKS).toBe('Two');
    expect(await unreloaded()).toBe(true);

    // Vite restarts itself when its configuration changes: the tab waits for its socket (in a
    // worker made from a blob), then reloads.
    await edit(copy, 'vite.config.ts', 'export default', '// Edited.\nexport default');
    await expect.poll(unreloaded, WHILE_VITE_WORKS).toBeUndefined();
    await expect.poll(heading, WHILE_VITE_WORKS).toBe('Two');
    expect(refused).toEqual([]);
    await page.close();

    const server = dev.serverPid();
    const stopped = performance.now();
    process.kill(-dev.child.pid!, 'SIGINT');
    expect(await dev.exited).toBe(0);
    expect(performance.now() - stopped).toBeLessThan(5_000);
    expect(isAlive(server)).toBe(false);
    expect(await postgresProcessesFor(copy)).toEqual([]);
    // A start, two hot updates, a restart and a reload, each on a possibly busy machine.
  }, 240_000);

  it.each([
    {
      taken: 'VITE_PORT',
      env: (port: number) => ({ VITE_PORT: String(port) }),
      line: (port: number) =>
        `VITE_PORT=${port} is already in use (another npm run dev?): set VITE_PORT to a free port`,
    },
    {
      taken: 'the server’s port',
      host: '127.0.0.1',
      env: (port: number) => ({
        AUTH_HOST: '127.0.0.1',
        AUTH_PORT: String(port),
      }),
      line: (port: number) => `auth cannot listen on 127.0.0.1:${port} (AUTH_HOST, AUTH_PORT)`,
      databaseStopped: true,
    },
  ])('ends with one line and a non-zero status when $taken is taken', async (c) => {
    const taken = net.createServer();
    const port = await listenOnFreePort(taken, c.host);
    try {
      const dev = spawnDev(copy, {
        VITE_PORT: String(await freePort()),
        ...c.env(port),
      });
      running = dev;
      expect(await dev.exited).toBe(1);
      expect(dev.output()).toContain(c.line(port));
      if (c.databaseStopped) expect(await postgresProcessesFor(copy)).toEqual([]);
    } finally {
      taken.close();
    }
  });
});

/** How long a hot update or a reload may take on a busy machine. */
const WHILE_VITE_WORKS = { timeout: 60_000, interval: 50 };

/** The repository's files (tracked, or new and not ignored) in a temporary folder. */
async function copyOfRepository(): Promise<string> {
  const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'dev-loop-'));
  await fs.chmod(copy, 0o755);
  const { stdout } = await promisify(execFile)(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  for (const file of stdout.split('\0').filter(Boolean)) {
    await fs.mkdir(path.dirname(path.join(copy, file)), { recursive: true });
    await fs.copyFile(path.join(ROOT, file), path.join(copy, file)).catch(() => undefined);
  }
  // Hard links: quick, and Vite's cache of the copy (node_modules/.vite) is a folder of its own.
  await promisify(execFile)('cp', ['-al', path.join(ROOT, 'node_modules'), copy]);
  await fs.rm(path.join(copy, 'node_modules', '.vite'), {
    recursive: true,
    force: true,
  });
  return copy;
}

async function edit(copy: string, file: string, from: string, to: string): Promise<void> {
  const target = path.join(copy, file);
  const text = await fs.readFile(target, 'utf8');
  expect(text).toContain(from);
  // Written whole and renamed over the file, as editors save: no watcher reads it half-written.
  await fs.writeFile(`${target}.draft`, text.replace(from, to));
  await fs.rename(`${target}.draft`, target);
}

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listenOnFreePort(server, '127.0.0.1');
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Dev = ReturnType<typeof spawnDev>;

/** `npm run dev` in `cwd`, in a process group of its own, as a terminal starts it. */
function spawnDev(cwd: string, env: Record<string, string>) {
  const child = spawn('npm', ['run', 'dev'], {
    cwd,
    env: {
      ...process.env,
      LOG_FORMAT: 'json',
      NOTES8000_HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, output: () => output, exited };
}

/** `npm run dev` serving on free ports: its login service's URL, once it serves. */
async function startDev(cwd: string) {
  const [auth, notes8080, notes8000, vite] = await Promise.all([1, 2, 3, 4].map(freePort));
  const dev = spawnDev(cwd, {
    AUTH_HOST: '127.0.0.1',
    AUTH_PORT: String(auth),
    NOTES8080_HOST: '127.0.0.1',
    NOTES8080_PORT: String(notes8080),
    NOTES8000_PORT: String(notes8000),
    VITE_PORT: String(vite),
  });
  /** The first line of the output from now on that matches `pattern`. */
  const line = async (pattern: RegExp): Promise<RegExpExecArray> => {
    const from = dev.output().length;
    await expect
      .poll(() => pattern.exec(dev.output().slice(from)), {
        timeout: 60_000,
        interval: 50,
      })
      .not.toBeNull();
    return pattern.exec(dev.output().slice(from))!;
  };
  await line(/auth listening on/);
  return {
    ...dev,
    url: `http://127.0.0.1:${auth}`,
    line,
    /** The server process that serves now (its latest "listening" line). */
    serverPid: () =>
      Number(
        [...dev.output().matchAll(/"pid":(\d+)[^\n]*auth listening on/g)].at(-1)?.[1] ?? Number.NaN,
      ),
  };
}
