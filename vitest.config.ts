import { defineConfig } from 'vitest/config';

/**
 * Files that measure time, memory or load: they run one at a time, after all the others, so that
 * nothing else competes with them for the machine.
 */
const ALONE = [
  // It times a server restart, which is CPU-bound.
  'tests/development.test.ts',
  'tests/faults/loginFloodFairness.test.ts',
  'tests/faults/load.test.ts',
  'tests/faults/shutdown.test.ts',
  'tests/faults/timing.test.ts',
  'tests/faults/hostileLoad/**',
];
/**
 * Files that start whole processes and their databases, stop or freeze a database, or time an
 * event with seconds of margin: two at a time among themselves, after the independent files,
 * so that each has a core while it starts processes.
 */
const PAIRED = [
  'tests/faults/outage.test.ts',
  'tests/faults/logins.test.ts',
  'tests/faults/hostile.test.ts',
  'tests/faults/sessions.test.ts',
  'tests/operations.test.ts',
  'tests/limits.test.ts',
  'tests/security.test.ts',
  'tests/startup.test.ts',
  'tests/envFile.test.ts',
  'tests/testRun.test.ts',
];
/** The image and compose.yaml need a container engine: the container pass of .ci/run. */
const NEEDS_ENGINE = process.env.TEST_IMAGES === '1' ? [] : ['tests/containers/**'];

const EACH_FILE = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    // Once for every project: one PostgreSQL for the whole run.
    globalSetup: ['tests/support/globalSetup.ts'],
    projects: [
      {
        test: {
          ...EACH_FILE,
          name: 'together',
          include: ['tests/**/*.test.ts'],
          exclude: [...ALONE, ...PAIRED, ...NEEDS_ENGINE],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...EACH_FILE,
          name: 'paired',
          include: PAIRED,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...EACH_FILE,
          name: 'alone',
          include: ALONE.map((pattern) =>
            pattern.endsWith('/**') ? `${pattern}/*.test.ts` : pattern,
          ),
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
