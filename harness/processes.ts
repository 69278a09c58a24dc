import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICE_NAMES, type ServiceName } from '../server/config.js';
import { isListening } from '../server/lifecycle.js';

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
  /**
   * SIGTERM to the server process, SIGKILL when it has not ended within `graceMs`; resolves with
   * how it ended.
   */
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
  /**
   * In a process group of its own, as a terminal starts it (so that the group can be signalled).
   */
  ownGroup?: boolean;
}

const READY_TIMEOUT_MS = 120_000;

interface Spawned {
  child: ChildProcess;
  /**
   * Where each service (and the metrics) listens, as the process reports it; rejects when it exits
   * first.
   */
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
  if (form === 'compiled')
    await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  const startedAt = performance.now();
  const child =
    form === 'npm'
      ? spawn('npm', ['start'], {
          cwd,
          env: environment,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: ownGroup,
        })
      : spawn(
          wrapper[0] ?? process.execPath,
          [
            ...(wrapper.length > 0 ? [...wrapper.slice(1), process.execPath] : []),
            ...nodeFlags,
            ...(form === 'compiled' ? [start.entry] : ['--import', 'tsx', 'server/main.ts']),
          ],
          {
            cwd,
            env: environment,
            stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
            detached: ownGroup,
          },
        );
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

/**
 * A start that is expected to end by itself (refused, failed): how it ended, what it printed, how
 * long it took.
 */
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

/**
 * Ends every process below this one, as an interrupted test run must, before it exits: SIGTERM to
 * each (a server drains and stops its database), and SIGKILL to those left after `graceMs`.
 * Synchronous: Vitest exits a millisecond after the signal, whatever else listens to it.
 */
export function endDescendants(graceMs = 5_000): void {
  const deadline = performance.now() + graceMs;
  // All of them at once: a worker that ends leaves its servers to init, outside this tree.
  const ending = descendants(process.pid);
  for (const pid of ending) signal(pid, 'SIGTERM');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (ending.some(isAlive) && performance.now() < deadline) Atomics.wait(pause, 0, 0, 100);
  for (const pid of ending) signal(pid, 'SIGKILL');
}

/** Whether process `pid` still exists. */
export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
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

/** A data folder the embedded PostgreSQL's user can reach; the caller removes it. */
export async function temporaryDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'services-data-'));
  await fs.chmod(dir, 0o755);
  return dir;
}

/** Removes a data folder, killing any PostgreSQL server still running on it. */
export async function removeDataDir(dir: string): Promise<void> {
  for (const pid of await postgresProcessesFor(dir)) signal(pid, 'SIGKILL');
  await fs.rm(dir, { recursive: true, force: true });
}

// Linux process facts, read from /proc.

/** Process ids of PostgreSQL servers whose command line names `dataDir`. */
export async function postgresProcessesFor(dataDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of allProcesses()) {
    const command = (await commandLine(pid)).join(' ');
    if (command.includes('postgres') && command.includes(dataDir)) pids.push(pid);
  }
  return pids;
}

/** Resident set size of `pid` in bytes (VmRSS), or NaN once the process is gone. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Samples the RSS of `pid` every `intervalMs` until stopped; `stop()` gives the highest seen. */
export function sampleRss(pid: number, intervalMs = 50): { stop(): Promise<number> } {
  let peak = 0;
  let sampling = Promise.resolve();
  const take = () => {
    sampling = rssBytes(pid).then((rss) => {
      if (rss > peak) peak = rss;
    });
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      take();
      await sampling;
      return peak;
    },
  };
}

/** CPU time (user + system) `pid` has used so far, in milliseconds; NaN once it is gone. */
export async function cpuMs(pid: number): Promise<number> {
  const fields = statFields(pid);
  // utime and stime are fields 14 and 15 of stat, counted in clock ticks (USER_HZ, 100 on Linux).
  return fields.length > 12 ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : Number.NaN;
}

/**
 * The Node processes of a server: `pid`, then the node:cluster workers below it (descendants whose
 * command line runs the same script; Node gives a worker its absolute path), not the embedded
 * PostgreSQL's processes nor any other child.
 */
export async function serverProcesses(pid: number): Promise<number[]> {
  const script = (await commandLine(pid)).at(-1);
  const workers: number[] = [];
  for (const below of script ? descendants(pid) : []) {
    const last = (await commandLine(below)).at(-1);
    if (last === script || last?.endsWith(`/${script}`)) workers.push(below);
  }
  return [pid, ...workers];
}

/**
 * CPU time (ms) of a server's own Node processes (serverProcesses); of a server without workers,
 * what cpuMs gives.
 */
export async function serverCpuMs(pid: number): Promise<number> {
  const times = await Promise.all((await serverProcesses(pid)).map(cpuMs));
  return times.reduce((sum, time) => sum + time, 0);
}

export async function commandLine(pid: number): Promise<string[]> {
  const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return raw.split('\0').filter(Boolean);
}

/** Every live process below `root` in the process tree, parents before their children. */
export function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const pid of allProcesses()) {
    const parent = Number(statFields(pid)[1]);
    if (Number.isInteger(parent)) parents.set(pid, parent);
  }
  const below = (pid: number): number[] =>
    [...parents]
      .filter(([, parent]) => parent === pid)
      .flatMap(([child]) => [child, ...below(child)]);
  return below(root);
}

/** The TCP ports `pid` itself listens on (its sockets in LISTEN state), from /proc. */
export async function listeningPorts(pid: number): Promise<number[]> {
  const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  const targets = await Promise.all(
    fds.map((fd) => fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')),
  );
  const own = new Set(targets.flatMap((target) => /^socket:\[(\d+)\]$/.exec(target)?.[1] ?? []));
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await fs.readFile(table, 'utf8').catch(() => '')).split('\n').slice(1)) {
      // sl, local address (`ADDRESS:PORT` in hex), remote address, state (0A: listening), queues,
      // timers, retransmits, uid, timeout, inode.
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && own.has(fields[9]!))
        ports.add(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

function allProcesses(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses):
 * state, ppid, …
 */
function statFields(pid: number): string[] {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return [];
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
