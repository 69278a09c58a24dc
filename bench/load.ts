import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cpuMs } from '../harness/procfs.js';

// wrk, one thread on 16 connections, with a Lua script for each run: written in C on an event
// loop, it takes little of the two cores that the servers and PostgreSQL need.
const CONNECTIONS = 16;

/** Reads and updates cycle over a list's ids; deletes take each id once, `next` on to `last`. */
export type Ids = { cycle: number[] } | { next: number; last: number };

export interface Load {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, or a template (`/notes/{id}`) that `ids` fills in request after request. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  ids?: Ids;
}

export type Timing = { warmupSeconds: number; seconds: number };

export interface Figures {
  requestsPerSecond: number;
  /** The server process's CPU time (user and system, from /proc) per request, in µs. */
  cpuUs: number;
  /** Connection errors, timeouts, and answers of 400 and above. */
  errors: number;
}

/** A warm-up whose figures are thrown away, then the measured run and the CPU `pid` spent on it. */
export async function measure(load: Load, pid: number, timing: Timing): Promise<Figures> {
  if (timing.warmupSeconds > 0) await runWrk(load, timing.warmupSeconds);
  const before = await cpuMs(pid);
  const run = await runWrk(load, timing.seconds);
  return { ...run, cpuUs: (((await cpuMs(pid)) - before) * 1000) / run.requests };
}

async function runWrk(load: Load, seconds: number) {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    const script = path.join(folder, 'load.lua');
    await fs.writeFile(script, luaScript(load));
    const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script];
    const { stdout } = await promisify(execFile)('wrk', [...args, load.url]);
    const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
    const requests = number(/(\d+) requests in/);
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/;
    const errors =
      number(/Non-2xx or 3xx responses: (\d+)/) +
      (socketErrors
        .exec(stdout)
        ?.slice(1)
        .reduce((sum, count) => sum + Number(count), 0) ?? 0);
    // Each connection has a request of its own in flight when wrk stops.
    if (load.ids && 'next' in load.ids) load.ids.next += requests + CONNECTIONS;
    // The next run starts once the requests left in flight are answered.
    await sleep(250);
    return { requests, errors, requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/) };
  } finally {
    await fs.rm(folder, { recursive: true, force: true });
  }
}

// JSON's string literals are Lua's as long as they hold ASCII only, as the benchmark's do.
const lua = (text: string) => JSON.stringify(text);

function luaScript({ method = 'GET', path: template, headers = {}, body, ids }: Load): string {
  const [before, after] = template.split('{id}').map(lua);
  const id = !ids
    ? undefined
    : 'cycle' in ids
      ? `cycle[(taken - 1) % #cycle + 1]`
      : `math.min(${ids.next} + taken - 1, ${ids.last})`;
  const request = [
    `cycle = {${ids && 'cycle' in ids ? ids.cycle.join(', ') : ''}}`,
    'taken = 0',
    'request = function()',
    '  taken = taken + 1',
    `  return wrk.format(nil, ${before} .. ${id} .. ${after})`,
    'end',
  ];
  return [
    `wrk.method = ${lua(method)}`,
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    ...(body === undefined ? [] : [`wrk.body = ${lua(body)}`]),
    ...(id ? request : [`wrk.path = ${lua(template)}`]),
  ].join('\n');
}
