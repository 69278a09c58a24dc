import { parseArgs } from 'node:util';
import type { Timing } from './load.js';

export const GROUPS = ['pages', 'startup', 'auth', 'health', 'notes-8080', 'notes-8000'] as const;
export type Group = (typeof GROUPS)[number];

export interface BenchOptions {
  quick: boolean;
  /** Rounds of every load scenario; the report shows their medians. */
  rounds: number;
  timing: Timing;
  /** Cold/warm start pairs, and login page loads in the browser. */
  startRuns: number;
  pageLoads: number;
  groups: Set<Group>;
  cpuProfile: boolean;
  /** Where the Markdown report goes; undefined: not written. */
  reportFile?: string;
}

const USAGE = `npm run bench [-- options]
  --quick            smoke check: 1 round, short runs, no thresholds, no BENCHMARKS.md
  --rounds N         rounds of every load scenario (default 3; quick 1)
  --seconds S        measured seconds per run, whole seconds (default 5; quick 1)
  --warmup S         warm-up seconds before each run, whole seconds (default 1; quick 0)
  --only G[,G...]    only these groups: ${GROUPS.join(', ')}
  --cpu-prof         run the services under node --cpu-prof and summarise the profile
  --report FILE      write the Markdown report there (default BENCHMARKS.md; quick: none)
  --no-report        write no Markdown report`;

export function parseOptions(argv: string[]): BenchOptions {
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
  const quick = values.quick;
  const number = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} needs a number, got ${value}\n${USAGE}`);
    return parsed;
  };
  const groups = values.only ? values.only.split(',').map((group) => group.trim()) : [...GROUPS];
  for (const group of groups) {
    if (!(GROUPS as readonly string[]).includes(group)) throw new Error(`unknown group ${group}\n${USAGE}`);
  }
  return {
    quick,
    rounds: Math.max(1, Math.round(number(values.rounds, quick ? 1 : 3, 'rounds'))),
    timing: {
      warmupSeconds: Math.round(number(values.warmup, quick ? 0 : 1, 'warmup')),
      seconds: Math.max(1, Math.round(number(values.seconds, quick ? 1 : 5, 'seconds'))),
    },
    startRuns: quick ? 1 : 3,
    pageLoads: quick ? 1 : 5,
    groups: new Set(groups as Group[]),
    cpuProfile: values['cpu-prof'],
    reportFile: values['no-report'] ? undefined : (values.report ?? (quick ? undefined : 'BENCHMARKS.md')),
  };
}
