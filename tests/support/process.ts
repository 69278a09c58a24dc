import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { freeLoopbackPort } from '../../server/shared/embeddedPostgres.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface StartedProcess {
  child: ChildProcess;
  urls: { notes8080: string; notes8000: string; auth: string };
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
}

export interface ProcessOptions {
  dataDir: string;
  env?: Record<string, string>;
  /** `source`: `server/main.ts` under tsx (the default); `compiled`: what `npm start` runs, compiled first. */
  form?: 'source' | 'compiled';
}

/** A data folder the embedded PostgreSQL's user can reach, removed by the caller. */
export async function temporaryDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'services-data-'));
  await fs.chmod(dir, 0o755);
  return dir;
}

/**
 * A data folder for the tests of one file, made before them and removed after them together
 * with any PostgreSQL server still running on it. Returns the folder's path once made.
 */
export function useTemporaryDataDir(): () => string {
  let dir = '';
  beforeAll(async () => {
    dir = await temporaryDataDir();
  });
  afterAll(async () => {
    for (const pid of await postgresProcessesFor(dir)) process.kill(pid, 'SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/**
 * Starts the services' entry point as `npm start` does, from its source or compiled, on free
 * ports, and waits until all three services say where they listen.
 */
export async function startServices({ dataDir, env = {}, form = 'source' }: ProcessOptions): Promise<StartedProcess> {
  const ports = {
    NOTES8080_PORT: await freeLoopbackPort(),
    NOTES8000_PORT: await freeLoopbackPort(),
    AUTH_PORT: await freeLoopbackPort(),
  };
  // The compiled form: package.json's prestart compile, then its start script's entry point.
  if (form === 'compiled') await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  const entry = form === 'compiled' ? ['dist/server/main.js'] : ['--import', 'tsx', 'server/main.ts'];
  const child = spawn(process.execPath, entry, {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATA_DIR: dataDir,
      NOTES8080_HOST: '127.0.0.1',
      AUTH_HOST: '127.0.0.1',
      ...Object.fromEntries(Object.entries(ports).map(([key, value]) => [key, String(value)])),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );

  const deadline = Date.now() + 90_000;
  while ((output.match(/listening on/g) ?? []).length < 3) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`services did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    urls: {
      notes8080: `http://127.0.0.1:${ports.NOTES8080_PORT}`,
      notes8000: `http://127.0.0.1:${ports.NOTES8000_PORT}`,
      auth: `http://127.0.0.1:${ports.AUTH_PORT}`,
    },
    output: () => output,
    exited,
  };
}

/** Process ids of PostgreSQL servers whose command line names `dataDir`. */
export async function postgresProcessesFor(dataDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && cmdline.includes(dataDir)) pids.push(Number(entry));
  }
  return pids;
}
