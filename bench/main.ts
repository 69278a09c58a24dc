import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../harness/processes.js';
import { countInstructions, hasValgrind } from './callgrind.js';
import { hadErrors, markdown, missedTargets, type Run } from './report.js';
import { runRound } from './rounds.js';
import { compilePeers, stopAll } from './sides.js';

// `npm run bench`: the project's services beside a plain Koa peer and a Fastify peer (bench/peers/)
// in rounds of fresh processes, then instructions per request under callgrind. A full run
// rewrites docs/benchmarks.md above its KEPT line; what follows it is kept by hand.
const USAGE = `npm run bench [-- options]
  --quick        smoke check: 1 short round, no callgrind, no report
  --rounds N     rounds of fresh processes (default 5)
  --seconds S    measured seconds of each run (default 5), after --warmup S (default 1)
  --note TEXT    a sentence for the report: when it ran, what else the machine did`;
const REPORT = path.join(ROOT, 'docs', 'benchmarks.md');
const KEPT = '<!-- Kept by hand from here on: `npm run bench` rewrites only what is above. -->';

const text = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;
const { values: options } = parseArgs({
  options: {
    rounds: text,
    seconds: text,
    warmup: text,
    note: text,
    quick: flag,
    help: flag,
  },
});
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
const { quick = false, note } = options;
const whole = (name: 'rounds' | 'seconds' | 'warmup', fallback: number) => {
  const value = Number(options[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name}: a whole number\n${USAGE}`);
  return value;
};
const timing = {
  warmupSeconds: whole('warmup', quick ? 0 : 1),
  seconds: whole('seconds', quick ? 1 : 5),
};
const sizes = { warmup: 4000, windows: 5, perWindow: 300, endpoints: 3 };

const started = performance.now();
const log = (message: string) =>
  console.error(
    `[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`,
  );

const peers = await compilePeers();
// However the run ends, what it started goes with it.
const end = (code: number) =>
  void Promise.allSettled([stopAll(), peers.remove()]).finally(() => process.exit(code));
process.once('SIGINT', () => end(130));
for (const event of ['uncaughtException', 'unhandledRejection'] as const)
  process.once(event, (error) => (console.error('[bench] the run failed:', error), end(1)));

const loadBefore = os.loadavg()[0]!;
const rounds = [];
for (let round = 1; round <= Math.max(1, whole('rounds', quick ? 1 : 5)); round++)
  rounds.push(await runRound(round, timing, peers.folder, log));
const loadAverage: Run['loadAverage'] = [loadBefore, os.loadavg()[0]!];
const run: Run = { date: '', minutes: 0, note, rounds, timing, sizes, loadAverage };
// Under valgrind the start alone takes a minute: the smoke check leaves it out.
if (quick) run.noInstructions = 'not counted by --quick';
else if (!(await hasValgrind())) run.noInstructions = 'valgrind is not installed';
else run.instructions = await countInstructions(peers.folder, sizes, log);
await peers.remove();
run.date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
run.minutes = (performance.now() - started) / 60_000;

const generated = markdown(run);
console.log(`\n${generated}`);
log(`targets missed: ${missedTargets(run).join(', ') || 'none'}`);
if (!quick) {
  const kept = (await fs.readFile(REPORT, 'utf8').catch(() => '')).split(KEPT)[1] ?? '\n';
  await fs.writeFile(REPORT, `${generated}\n${KEPT}${kept}`);
  log(`wrote ${path.relative(ROOT, REPORT)}`);
}
process.exit(hadErrors(run) ? 1 : 0);
