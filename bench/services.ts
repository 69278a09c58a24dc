import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../server/shared/embeddedPostgres.js';
import { commandLine, descendants } from './proc.js';

export const ROOT = path.resolve(import.meta.dirname, '..');

export interface ServiceUrls {
  notes8080: string;
  notes8000: string;
  auth: string;
}

export interface RunningServices {
  /** The Node process that runs the server's entry point (all three services live in it). */
  pid: number;
  urls: ServiceUrls;
  /** Milliseconds from spawn until every service answered an HTTP request. */
  startMs: number;
  output(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  dataDir: string;
  /** `npm`: exactly what a user types (`npm start`); `node`: what `npm start` runs, without npm (see startScript). */
  via: 'npm' | 'node';
  databaseUrl?: string;
  /** Extra Node flags for the service process (e.g. `--cpu-prof`); `via: 'node'` only. */
  nodeFlags?: string[];
}

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;
const running = new Set<RunningServices>();
const dataDirs = new Set<string>();

/** A data folder the embedded PostgreSQL's user can reach. */
export async function temporaryDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-data-'));
  dataDirs.add(dir);
  await fs.chmod(dir, 0o755);
  return dir;
}

export async function removeDataDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  dataDirs.delete(dir);
}

/**
 * The environment the services get, before the benchmark's own settings: this one's, with the
 * password hash cost and NODE_ENV left to their defaults, as a plain `npm start` has them.
 */
export function serviceEnvironment(): NodeJS.ProcessEnv {
  const { PASSWORD_HASH_COST: _cost, NODE_ENV: _mode, ...env } = process.env;
  return env;
}

/**
 * Starts the services on free loopback ports and waits until each service answers HTTP.
 * Logging is turned down to `warn` so that writing one line per request does not dominate the
 * measurement; the password hash cost stays at its default.
 */
export async function startServices(options: StartOptions): Promise<RunningServices> {
  const ports = {
    NOTES8080_PORT: await freeLoopbackPort(),
    NOTES8000_PORT: await freeLoopbackPort(),
    AUTH_PORT: await freeLoopbackPort(),
  };
  const env: NodeJS.ProcessEnv = {
    ...serviceEnvironment(),
    LOG_LEVEL: 'warn',
    DATA_DIR: options.dataDir,
    DATABASE_URL: options.databaseUrl ?? '',
    NOTES8080_HOST: '127.0.0.1',
    NOTES8000_HOST: '127.0.0.1',
    AUTH_HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(ports).map(([key, value]) => [key, String(value)])),
  };

  const script = await startScript();
  // Without npm, its `prestart` compile is run here first, outside the timing.
  if (options.via === 'node') await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  const started = performance.now();
  const child =
    options.via === 'npm'
      ? spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [...(options.nodeFlags ?? []), script.entry], {
          cwd: ROOT,
          env: { ...env, ...script.env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const urls: ServiceUrls = {
    notes8080: `http://127.0.0.1:${ports.NOTES8080_PORT}`,
    notes8000: `http://127.0.0.1:${ports.NOTES8000_PORT}`,
    auth: `http://127.0.0.1:${ports.AUTH_PORT}`,
  };
  try {
    await waitUntilAnswering(Object.values(urls), child, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const startMs = performance.now() - started;
  const pid = options.via === 'npm' ? await serverProcessBelow(child.pid!, script.entry) : child.pid!;

  const services: RunningServices = {
    pid,
    urls,
    startMs,
    output: () => output,
    async stop() {
      running.delete(services);
      // Only the server process gets the signal: npm and its shell end when it ends.
      signal(pid, 'SIGTERM');
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STOP_TIMEOUT_MS)),
      ]);
      if (!stopped) {
        signal(pid, 'SIGKILL');
        signal(child.pid!, 'SIGKILL');
        throw new Error(`services did not stop within ${STOP_TIMEOUT_MS} ms:\n${output.slice(-2000)}`);
      }
    },
  };
  running.add(services);
  return services;
}

/** Stops whatever this run started and has not stopped yet, and removes its data folders (on failure or Ctrl-C). */
export async function stopAllServices(): Promise<void> {
  await Promise.allSettled([...running].map((services) => services.stop()));
  await Promise.allSettled([...dataDirs].map(removeDataDir));
}

function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function waitUntilAnswering(urls: string[], child: ChildProcess, output: () => string) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const pending = new Set(urls);
  while (pending.size > 0) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`services exited during start-up:\n${output().slice(-4000)}`);
    }
    if (Date.now() > deadline) throw new Error(`services did not answer within ${READY_TIMEOUT_MS} ms:\n${output().slice(-4000)}`);
    await Promise.all(
      [...pending].map(async (url) => {
        // Any HTTP answer counts: the port is served.
        const answered = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
          async (response) => (await response.arrayBuffer(), true),
          () => false,
        );
        if (answered) pending.delete(url);
      }),
    );
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * package.json's `start` script, `NAME=value … node <file>`: its settings and entry point, so
 * that `via: 'node'` runs what `npm start` runs, with Node flags added.
 */
async function startScript(): Promise<{ env: Record<string, string>; entry: string }> {
  const { scripts } = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const start = /^((?:\w+=\S+ )*)node (\S+)$/.exec(scripts.start ?? '');
  if (!start) throw new Error(`the start script is not "NAME=value … node <file>": ${scripts.start}`);
  const env = Object.fromEntries(start[1]!.split(' ').filter(Boolean).map((setting) => setting.split('=') as [string, string]));
  return { env, entry: start[2]! };
}

/** The deepest process under `root` that runs `entry` (npm → sh → node). */
async function serverProcessBelow(root: number, entry: string): Promise<number> {
  const candidates: number[] = [];
  for (const pid of await descendants(root)) {
    if ((await commandLine(pid)).includes(entry)) candidates.push(pid);
  }
  if (candidates.length === 0) throw new Error('could not find the server process under npm start');
  // Descendants come parent first, so the last match is the innermost.
  return candidates.at(-1)!;
}
