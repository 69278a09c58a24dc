import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';

// Linux processes: what each runs, holds and spends, read from /proc; and their ends.

/** Process ids of PostgreSQL servers whose command line names `dataDir`. */
export async function postgresProcessesFor(dataDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of allProcesses()) {
    const command = (await commandLine(pid)).join(' ');
    if (command.includes('postgres') && command.includes(dataDir)) pids.push(pid);
  }
  return pids;
}

/** The PostgreSQL server of `dataDir` and every process it started (its backends and workers). */
export async function databaseProcesses(dataDir: string): Promise<number[]> {
  const servers = await postgresProcessesFor(dataDir);
  return [...servers, ...(await Promise.all(servers.map(descendants))).flat()];
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

/** The command line of `pid`, its arguments apart; empty once it is gone. */
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

/** /proc/<pid>/stat's fields after the command (it may hold spaces, parentheses): state, ppid, … */
function statFields(pid: number): string[] {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return [];
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
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

/** Whether process `pid` still exists (signal 0 checks it, sending nothing). */
export const isAlive = (pid: number) => signal(pid, 0);

/** Sends `name` to `pid`; false when it is already gone. */
export function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    return process.kill(pid, name);
  } catch {
    return false;
  }
}
