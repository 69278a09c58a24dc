import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICE_NAMES, type ServiceName } from '../server/config.js';
import { isListening } from '../server/lifecycle.js';
import { commandLine, descendants, signal } from './procfs.js';

/** The repository's root folder. */
export const ROOT = path.resolve(import.meta.dirname, '..');

/** Where each service the process runs answers (only those of its SERVICES are present). */
export type ServiceUrls = Record<ServiceName, string>;

export interface RunningProcess {
  /** What was spawned: node itself, or npm for `form: 'npm'`. */
  child: ChildProcess;
  /** The Node process that runs the server's entry point (all three services live in it). */
  pid: number;
  urls: ServiceUrls;
  /** Where the metrics are served (with METRICS_PORT set). */
  metricsUrl?: string;
  /** Milliseconds from spawn until every service answered an HTTP request. */
  startMs: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the spawned process has ended. */
  exited: Promise<number | string>;
  /** SIGTERM to the server process, SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface ProcessOptions {
  /** DATA_DIR: where the embedded PostgreSQL keeps its cluster. */
  dataDir: string;
  env?: Record<string, string>;
  /**
   * `source`: `server/main.ts` under tsx; `compiled`: what `npm start` runs (compiled first by
   * its `prestart` script); `npm`: `npm start` itself, exactly as a user types it.
   */
  form?: 'source' | 'compiled' | 'npm';
  /** Extra Node flags for the server process (`--cpu-prof`, say); not with `npm`. */
  nodeFlags?: string[];
  /** A command that runs node on the entry point (`valgrind --tool=callgrind`); not with `npm`. */
  wrapper?: string[];
  /** How long its services may take to answer once spawned; 2 minutes unless said. */
  readyTimeoutMs?: number;
  /** Where it runs: the repository, or a copy of it. */
  cwd?: string;
  /** In a process group of its own, as a terminal starts it (the group can be signalled). */
  ownGroup?: boolean;
}

const READY_TIMEOUT_MS = 120_000;

interface Spawned {
  child: ChildProcess;
  /** Where each service (and the metrics) listens, as reported; rejects if it exits first. */
  listening: Promise<{ urls: ServiceUrls; metricsUrl?: string }>;
  output(): string;
  exited: Promise<number | string>;
  /** performance.now() when it was spawned. */
  startedAt: number;
  entry: string;
}

/**
 * The server's entry point spawned in the given form, its services on loopback ports the system
 * chooses (port 0) unless `env` names them. The process reports the ports it got: over its IPC
 * channel when node is spawned directly, in its "listening on" log lines under npm (which passes
 * no channel on).
 */
async function spawnEntryPoint({
  dataDir,
  env = {},
  form = 'source',
  nodeFlags = [],
  wrapper = [],
  cwd = ROOT,
  ownGroup = false,
}: ProcessOptions): Promise<Spawned> {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    DATA_DIR: dataDir,
    NOTES8080_HOST: '127.0.0.1',
    NOTES8000_HOST: '127.0.0.1',
    AUTH_HOST: '127.0.0.1',
    NOTES8080_PORT: '0',
    NOTES8000_PORT: '0',
    AUTH_PORT: '0',
    ...env,
  };
  const start = await startScript();
  if (form === 'compiled') await compiled();
  const startedAt = performance.now();
  const options = { cwd, env: environment, detached: ownGroup };
  const node = [
    ...(wrapper.length > 0 ? [...wrapper.slice(1), process.execPath] : []),
    ...nodeFlags,
    ...(form === 'compiled' ? [start.entry] : ['--import', 'tsx', 'server/main.ts']),
  ];
  const child =
    form === 'npm'
      ? spawn('npm', ['start'], { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(wrapper[0] ?? process.execPath, node, {
          ...options,
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const served = (environment.SERVICES?.split(',').map((name) => name.trim()) ??
    SERVICE_NAMES) as ServiceName[];
  // With METRICS_PORT set, the metrics' address is reported beside the services'.
  const expected = [...served, ...(environment.METRICS_PORT ? ['metrics'] : [])];
  const listening = new Promise<{ urls: ServiceUrls; metricsUrl?: string }>((resolve, reject) => {
    const reported = (entries: { name: string; url: string }[]) => {
      if (expected.every((name) => entries.some((entry) => entry.name === name))) {
        const services = entries.filter(({ name }) => name !== 'metrics');
        resolve({
          urls: Object.fromEntries(services.map(({ name, url }) => [name, url])) as ServiceUrls,
          metricsUrl: entries.find(({ name }) => name === 'metrics')?.url,
        });
      }
    };
    child.on('message', (message: unknown) => {
      if (isListening(message)) reported(message.listening);
    });
    if (form === 'npm') {
      const announced = () =>
        reported(
          [...output.matchAll(/\b(\w+) listening on (http:\/\/[^\s"]+)/g)].map(([, name, url]) => ({
            name: name!,
            url: url!,
          })),
        );
      child.stdout!.on('data', announced);
    }
    void exited.then(() =>
      reject(new Error(`the services exited during start-up:\n${output.slice(-4000)}`)),
    );
  });
  // A start that is expected to fail never reports; its rejection is read only by those who wait
  // for it.
  listening.catch(() => undefined);
  // The channel must not keep this process alive, nor the spawned one from ending.
  child.channel?.unref();
  return { child, listening, output: () => output, exited, startedAt, entry: start.entry };
}

// The sources do not change during a run: `npm start`'s compile step runs once per test process.
let compiling: Promise<unknown> | undefined;
const compiled = () =>
  (compiling ??= promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT }));

/**
 * Starts the server's entry point (see spawnEntryPoint), and waits until every service it runs
 * answers HTTP. A process that exits first rejects with what it printed.
 */
export async function startProcess(options: ProcessOptions): Promise<RunningProcess> {
  const { child, listening, output, exited, startedAt, entry } = await spawnEntryPoint(options);
  let urls: ServiceUrls;
  let metricsUrl: string | undefined;
  const readyMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  try {
    ({ urls, metricsUrl } = await withDeadline(
      listening,
      readyMs,
      () =>
        `the services did not say where they listen ` +
        `within ${readyMs} ms:\n${output().slice(-4000)}`,
    ));
    // Started is serving, as a client would first find it: each port answers HTTP (and by then
    // the process has written what it logged while starting).
    await waitUntilAnswering(Object.values(urls), child, output, readyMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const startMs = performance.now() - startedAt;
  const pid = options.form === 'npm' ? await serverProcessBelow(child.pid!, entry) : child.pid!;
  return {
    child,
    pid,
    urls,
    metricsUrl,
    startMs,
    output,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      signal(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        signal(pid, 'SIGKILL');
        signal(child.pid!, 'SIGKILL');
      }, graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A start expected to end by itself (refused, failed): how it ended, its output, how long. */
export async function runUntilExit(
  options: ProcessOptions,
  timeoutMs = 30_000,
): Promise<{ code: number | string; output: string; ms: number }> {
  const { child, output, exited, startedAt } = await spawnEntryPoint(options);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: output(), ms: performance.now() - startedAt };
}

/** `promise`, or a rejection with `message()` once `ms` have passed without it settling. */
function withDeadline<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms))),
  ]).finally(() => clearTimeout(timer));
}

async function waitUntilAnswering(
  urls: string[],
  child: ChildProcess,
  output: () => string,
  readyMs: number,
) {
  const deadline = Date.now() + readyMs;
  const pending = new Set(urls);
  while (pending.size > 0) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the services exited during start-up:\n${output().slice(-4000)}`);
    if (Date.now() > deadline)
      throw new Error(
        `the services did not answer within ${readyMs} ms:\n${output().slice(-4000)}`,
      );
    await Promise.all(
      [...pending].map(async (url) => {
        // Any HTTP answer counts: the port is served. Its body is read to its end or to the
        // deadline, which a busy machine can reach after the answer began.
        const answered = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
          async (response) => (await response.arrayBuffer().catch(() => undefined), true),
          () => false,
        );
        if (answered) pending.delete(url);
      }),
    );
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * package.json's `start` script, `exec node <file>`: plain Node on the compiled entry point, with
 * no runtime flags, so that the compiled form runs exactly what `npm start` runs.
 */
export async function startScript(): Promise<{ entry: string }> {
  const { scripts } = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const start = /^exec node (\S+)$/.exec(scripts.start ?? '');
  if (!start) throw new Error(`the start script is not "exec node <file>": ${scripts.start}`);
  return { entry: start[1]! };
}

/** The deepest process under `root` that runs `entry` (npm → sh → node). */
async function serverProcessBelow(root: number, entry: string): Promise<number> {
  const candidates: number[] = [];
  for (const pid of descendants(root)) {
    if ((await commandLine(pid)).includes(entry)) candidates.push(pid);
  }
  if (candidates.length === 0) throw new Error('could not find the server process under npm start');
  // Descendants come parent first, so the last match is the innermost.
  return candidates.at(-1)!;
}
