import { parseArgs } from 'node:util';
import type { Timing } from './load.js';

const GROUPS = [
  'pages',
  'startup',
  'auth',
  'health',
  'notes-8080',
  'notes-8000',
  'session-store',
] as const;
export type Group = (typeof GROUPS)[number];

const USAGE =
  `npm run bench [-- options]
  --quick            smoke check: 1 round, short runs, ` +
  `no Lighthouse, no thresholds, no docs/benchmarks.md
  --rounds N         rounds of every load scenario (default 5; quick 1)
  --seconds S        measured seconds per run, whole seconds (default 5; quick 1)
  --warmup S         warm-up seconds before each run, whole seconds (default 1; quick 0)
  --only G[,G...]    only these groups: ${GROUPS.join(', ')}
                     (auth, health, notes-8080, ` +
  `notes-8000: measured against the peer, bench/peer.ts;
                      session-store: GET /api/me ` +
  `with SESSION_STORE=postgres against the memory store)
  --cpu-prof         run the services under node --cpu-prof and summarise the profile
  --report FILE      write the Markdown report there (default docs/benchmarks.md; quick: none)
  --no-report        write no Markdown report`;

export function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      report: { type: 'string' },
      'no-report': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const { quick } = values;
  const whole = (name: 'rounds' | 'seconds' | 'warmup', fallback: number, least: number) => {
    const parsed = Number(values[name] ?? fallback);
    if (!Number.isFinite(parsed) || parsed < 0)
      throw new Error(`--${name} needs a number, got ${values[name]}\n${USAGE}`);
    return Math.max(least, Math.round(parsed));
  };
  const groups = values.only?.split(',').map((group) => group.trim()) ?? [...GROUPS];
  const unknown = groups.find((group) => !(GROUPS as readonly string[]).includes(group));
  if (unknown) throw new Error(`unknown group ${unknown}\n${USAGE}`);
  const timing: Timing = {
    warmupSeconds: whole('warmup', quick ? 0 : 1, 0),
    seconds: whole('seconds', quick ? 1 : 5, 1),
  };
  return {
    quick,
    /** Rounds of every load scenario; the report shows their medians. */
    rounds: whole('rounds', quick ? 1 : 5, 1),
    timing,
    /** Cold/warm start pairs. */
    startRuns: quick ? 1 : 3,
    /** Login page loads in the browser, in each round. */
    pageLoads: quick ? 1 : 2,
    /**
     * Lighthouse runs of each page in each round: none in a quick run (each takes about ten
     * seconds).
     */
    lighthouseRuns: quick ? 0 : 1,
    groups: new Set(groups as Group[]),
    cpuProfile: values['cpu-prof'],
    /** Where the Markdown report goes; undefined: not written. */
    reportFile: values['no-report']
      ? undefined
      : (values.report ?? (quick ? undefined : 'docs/benchmarks.md')),
  };
}
