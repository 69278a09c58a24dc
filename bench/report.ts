import os from 'node:os';
import type { CallgrindSizes, Instructions } from './callgrind.js';
import { ENDPOINTS } from './endpoints.js';
import type { Figures } from './load.js';
import type { RoundFigures } from './rounds.js';
import type { Peer, SideName } from './sides.js';

/** What a run measured, and its tables in Markdown: the top of docs/benchmarks.md. */
export interface Run {
  date: string;
  minutes: number;
  note?: string;
  rounds: RoundFigures[];
  timing: { warmupSeconds: number; seconds: number };
  loadAverage: [before: number, after: number];
  sizes: CallgrindSizes;
  instructions?: Instructions;
  /** Why there are no instruction counts, when there are none. */
  noInstructions?: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const whole = (value: number) => Math.round(value).toLocaleString('en');
const table = (header: string[], rows: string[][]) =>
  [header, header.map((_, i) => (i === 0 ? '---' : '---:')), ...rows]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n');

/** Each round's figures of one endpoint, on all three sides. */
const roundsOf = (run: Run, id: string) =>
  run.rounds.map((round) => round.get(id) as Record<SideName, Figures>);

/** Medians over the rounds of `figure` on each side, the project's ratios to each peer by round. */
function summarize(run: Run, id: string, figure: (f: Figures) => number) {
  const rounds = roundsOf(run, id);
  const of = (side: SideName) => median(rounds.map((round) => figure(round[side])));
  const to = (peer: Peer) => rounds.map((round) => figure(round.project) / figure(round[peer]));
  const sides = [of('project'), of('Koa'), of('Fastify')];
  return { sides, toKoa: to('Koa'), toFastify: to('Fastify') };
}

const ratios = (values: number[]) =>
  `**${median(values).toFixed(2)}** (${values.map((value) => value.toFixed(2)).join(' ')})`;

/** Endpoints whose req/s misses its target against the plain Koa peer's. */
export const missedTargets = (run: Run) =>
  ENDPOINTS.filter(
    ({ id, target }) => median(summarize(run, id, (f) => f.requestsPerSecond).toKoa) < target,
  ).map(({ id }) => id);

/** Connection errors, timeouts and answers of 400 and above, all sides and rounds together. */
const errorsOf = (run: Run, id: string) =>
  roundsOf(run, id)
    .flatMap((round) => Object.values(round))
    .reduce((sum, figures) => sum + figures.errors, 0);

/** Whether any run had errors: its figures do not measure the endpoint. */
export const hadErrors = (run: Run) => ENDPOINTS.some(({ id }) => errorsOf(run, id) > 0);

function medians(run: Run): string {
  const rows = ENDPOINTS.map(({ id, target }) => {
    const rate = summarize(run, id, (f) => f.requestsPerSecond);
    const cpu = summarize(run, id, (f) => f.cpuUs);
    const met = median(rate.toKoa) >= target ? 'met' : '**missed**';
    return [
      `${id} (≥ ${target.toFixed(1)}: ${met})`,
      rate.sides.map(whole).join(' / '),
      ratios(rate.toKoa),
      ratios(rate.toFastify),
      cpu.sides.map(whole).join(' / '),
      `${median(cpu.toKoa).toFixed(2)} / ${median(cpu.toFastify).toFixed(2)}`,
      String(errorsOf(run, id)),
    ];
  });
  const header = ['Endpoint (target)', 'req/s: project / Koa / Fastify', 'project / Koa (rounds)'];
  const cpu = ['CPU µs/req: project / Koa / Fastify', 'CPU ratio: / Koa, / Fastify'];
  return table([...header, 'project / Fastify (rounds)', ...cpu, 'errors'], rows);
}

function instructions(run: Run): string {
  if (!run.instructions) return `Not counted: ${run.noInstructions}.`;
  const rows = [...run.instructions].map(([id, { project = NaN, Koa = NaN }]) => [
    id,
    whole(project),
    whole(Koa),
    (project / Koa).toFixed(2),
  ]);
  const { warmup, windows, perWindow } = run.sizes;
  const how = `${whole(warmup)} requests, then the median of ${windows} windows of ${perWindow}`;
  return `${table(['Endpoint', 'project', 'plain Koa', 'project / Koa'], rows)}\n\n(${how}.)`;
}

export function markdown(run: Run): string {
  const { warmupSeconds, seconds } = run.timing;
  const [before, after] = run.loadAverage.map((value) => value.toFixed(1));
  return [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` on ${run.date} (${run.minutes.toFixed(0)} minutes).` +
      (run.note ? ` ${run.note}` : ''),
    `${os.cpus()[0]?.model.trim()}, ${os.availableParallelism()} cores, Node ` +
      `${process.version}; load average (1 min) ${before} before the rounds, ${after} after.`,
    '',
    `${run.rounds.length} rounds of fresh processes; in each, every endpoint on the project, the ` +
      `plain Koa peer and the Fastify peer in turn (which goes first moves on each round), wrk ` +
      `on 16 connections, ${warmupSeconds} s of warm-up then ${seconds} s measured. Figures are ` +
      "medians over the rounds; a ratio is the median of the rounds' ratios (listed after it, " +
      'round by round). CPU: the server ' +
      "process's user and system time per request, from /proc (not PostgreSQL's). Errors: " +
      'connection errors, timeouts and answers of 400 and above, all sides and rounds together.',
    '',
    '## Against the peers',
    '',
    medians(run),
    '',
    '## Instructions per request (callgrind)',
    '',
    instructions(run),
    '',
  ].join('\n');
}
