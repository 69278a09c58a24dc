import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { send } from '../harness/http.js';
import { LIST, loadOn, type RoundSide } from './endpoints.js';
import type { Load } from './load.js';
import { withSides } from './rounds.js';
import type { SideName } from './sides.js';

/**
 * Instructions per request under callgrind (user space, every thread), which unlike req/s do not
 * move with other work on the machine: the project and the plain Koa peer, on the rounds' requests,
 * warmed up, then the median of windows (one holding a full collection of V8's counts far more).
 */
/** Requests of the warm-up and of each window; `endpoints`: how many of COUNTED, in order. */
export type CallgrindSizes = {
  warmup: number;
  windows: number;
  perWindow: number;
  endpoints: number;
};

/** By endpoint id, each side's instructions per request. */
export type Instructions = Map<string, Partial<Record<SideName, number>>>;

const COUNTED = ['notes8000 GET /health', 'notes8080 GET /notes/{id}', 'notes8080 PUT /notes/{id}'];
// The list's load lays down the notes that the reads and updates cycle over.
const READIED = [`notes8080 GET /notes (${LIST} notes)`, ...COUNTED];

const run = promisify(execFile);
export const hasValgrind = async () =>
  (await run('valgrind', ['--version']).catch(() => null)) !== null;

export async function countInstructions(
  peersFolder: string,
  sizes: CallgrindSizes,
  log: (message: string) => void,
): Promise<Instructions> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-callgrind-'));
  // Not instrumented until the counting starts: the starts and the warm-ups go faster.
  const valgrind = ['valgrind', '--tool=callgrind', '--instr-atstart=no'];
  const counted = COUNTED.slice(0, sizes.endpoints);
  const counts: Instructions = new Map(counted.map((id) => [id, {}]));
  const measureAll = async (sides: RoundSide[]) => {
    for (const side of sides) {
      for (const id of READIED) {
        const load = await loadOn(side, id, { warmupSeconds: 0, seconds: 0 });
        if (!counted.includes(id)) continue;
        const perRequest = await count(side.pid, load, sizes, folder);
        counts.get(id)![side.name] = perRequest;
        log(`callgrind: ${side.name} ${id}: ${Math.round(perRequest).toLocaleString('en')}`);
      }
    }
  };
  const peers = { names: ['Koa' as const], folder: peersFolder };
  await withSides(peers, measureAll, [
    ...valgrind,
    `--callgrind-out-file=${folder}/out.%p`,
  ]).finally(() => fs.rm(folder, { recursive: true, force: true }));
  return counts;
}

/** The median window's instructions per request of `load` on the process `pid`. */
async function count(pid: number, load: Load, sizes: CallgrindSizes, folder: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  try {
    await sendAll(load, sizes.warmup, agent);
    await control(pid, '--instr=on');
    const windows: number[] = [];
    for (let window = 0; window < sizes.windows; window++) {
      await control(pid, '--zero');
      await sendAll(load, sizes.perWindow, agent);
      await control(pid, '--dump');
      windows.push((await takeDump(pid, folder)) / sizes.perWindow);
    }
    return windows.sort((a, b) => a - b)[Math.floor(windows.length / 2)]!;
  } finally {
    agent.destroy();
  }
}

const control = (pid: number, command: string) => run('callgrind_control', [command, String(pid)]);

/** `count` requests of `load` on 4 keep-alive connections; an answer other than 2xx fails. */
async function sendAll(load: Load, count: number, agent: http.Agent) {
  const cycle = load.ids && 'cycle' in load.ids ? load.ids.cycle : [0];
  let sent = 0;
  const connection = async () => {
    while (sent < count) {
      const reply = await send(load.url, {
        method: load.method ?? 'GET',
        path: load.path.replace('{id}', String(cycle[sent++ % cycle.length])),
        headers: load.headers,
        body: load.body,
        agent,
        timeoutMs: 60_000,
      });
      if (reply.status >= 300) throw new Error(`${load.path} answered ${reply.status}`);
    }
  };
  await Promise.all([1, 2, 3, 4].map(connection));
}

/** The instructions in `pid`'s dump, which is then removed: the next dump is the only one. */
async function takeDump(pid: number, folder: string): Promise<number> {
  const [name] = (await fs.readdir(folder)).filter((file) => file.startsWith(`out.${pid}.`));
  const file = path.join(folder, name!);
  const total = /^(?:summary|totals): (\d+)/m.exec(await fs.readFile(file, 'utf8'))?.[1];
  await fs.rm(file);
  if (!total) throw new Error(`no total in callgrind's dump ${name}`);
  return Number(total);
}
