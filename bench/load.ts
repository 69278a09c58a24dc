import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { serverCpuMs } from '../harness/processes.js';
import { SeededIds, wrkScript, type CycledIds, type WrkOutput } from './wrkScript.js';

/**
 * The load generator every scenario goes through: wrk with one thread, in a process of its own,
 * driven by a Lua script per run (bench/wrkScript.ts). Written in C on an event loop, it takes
 * little of this small machine's cores, which the server under test and PostgreSQL need, and it
 * drives every server alike.
 */

export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

export interface HttpLoad {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, or its template (`/notes/{id}`) that `ids` fills in before each request. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  ids?: CycledIds | SeededIds;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latencies in milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  /** Connection errors, timeouts and answers whose status is not 2xx. */
  errors: number;
  requests: number;
  /**
   * CPU time per request (µs) of the server's Node processes during the measured run (with
   * WORKERS, the primary and its workers; not PostgreSQL); NaN when not measured. Unlike req/s, it
   * hardly moves when other work competes for the machine.
   */
  cpuUs: number;
}

/**
 * Long enough for a list of the largest notes (tens of MiB) to arrive: a slower answer is an error.
 */
const TIMEOUT_SECONDS = 10;

/**
 * wrk stops with a request in flight on each connection, which the server still answers: a login's
 * password check takes tens of milliseconds, and counts against the client's attempts at once (2 an
 * address) until then. The next run starts once they are answered, so that its first logins are
 * not refused (429) for the last run's.
 */
const SETTLE_MS = 250;

/** wrk's `-d` counts whole seconds. */
async function runWrk(load: HttpLoad, seconds: number): Promise<LoadResult> {
  const { url, method = 'GET', path: requestPath, headers = {}, body, connections, ids } = load;
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    const script = path.join(folder, 'load.lua');
    await fs.writeFile(script, wrkScript({ method, path: requestPath, headers, body, ids }));
    const args = [
      '-t1',
      `-c${connections}`,
      `-d${Math.max(1, Math.round(seconds))}s`,
      '--timeout',
      `${TIMEOUT_SECONDS}s`,
      '-s',
      script,
      url,
    ];
    const { stdout } = await promisify(execFile)('wrk', args, { maxBuffer: 1024 * 1024 });
    const line = stdout.trim().split('\n').at(-1)!;
    if (!line.startsWith('{'))
      throw new Error(`wrk ${args.join(' ')} printed no result:\n${stdout}`);
    const output = JSON.parse(line) as WrkOutput;
    if (ids instanceof SeededIds) ids.took(output.taken);
    return {
      requestsPerSecond: output.requests / (output.durationUs / 1e6),
      p50: output.p50Us / 1000,
      p99: output.p99Us / 1000,
      mean: output.meanUs / 1000,
      errors:
        output.connectErrors +
        output.readErrors +
        output.writeErrors +
        output.timeouts +
        output.non2xx,
      requests: output.requests,
      cpuUs: NaN,
    };
  } finally {
    await fs.rm(folder, { recursive: true, force: true });
  }
}

async function warmedUp<T>(timing: Timing, run: (seconds: number) => Promise<T>): Promise<T> {
  if (timing.warmupSeconds > 0) {
    await run(timing.warmupSeconds);
    await sleep(SETTLE_MS);
  }
  const measured = await run(timing.seconds);
  await sleep(SETTLE_MS);
  return measured;
}

/**
 * A warm-up whose numbers are thrown away, then the measured run and the CPU the server of
 * `serverPid` (and its workers) spent on it.
 */
export function measureHttp(
  load: HttpLoad,
  timing: Timing,
  serverPid: number,
): Promise<LoadResult> {
  return warmedUp(timing, async (seconds) => {
    const cpuBefore = await serverCpuMs(serverPid);
    const result = await runWrk(load, seconds);
    return {
      ...result,
      cpuUs: (((await serverCpuMs(serverPid)) - cpuBefore) * 1000) / result.requests,
    };
  });
}

/**
 * Several loads at the same time (warmed up together, then measured together; the CPU of neither is
 * its own).
 */
export function measureHttpTogether(loads: HttpLoad[], timing: Timing): Promise<LoadResult[]> {
  return warmedUp(timing, (seconds) => Promise.all(loads.map((load) => runWrk(load, seconds))));
}
