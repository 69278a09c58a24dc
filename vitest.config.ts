import { defineConfig } from 'vitest/config';

/**
 * Files that measure time, memory or load, start whole instances, or stop and freeze a database:
 * they run one at a time, after the others, so that no other file competes with them for the
 * machine. The others are independent (each has a database of its own, the containers of
 * compose.yaml run in the engine's network) and run two at a time.
 */
const ALONE = ['tests/faults/**', 'tests/operations.test.ts', 'tests/limits.test.ts', 'tests/security.test.ts', 'tests/startup.test.ts', 'tests/envFile.test.ts'];
/** The image and compose.yaml need a container engine: the container pass of .ci/run. */
const NEEDS_ENGINE = process.env.TEST_IMAGES === '1' ? [] : ['tests/containers/**'];

const EACH_FILE = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    // Once for both projects: one PostgreSQL for the whole run.
    globalSetup: ['tests/support/globalSetup.ts'],
    projects: [
      {
        test: { ...EACH_FILE, name: 'together', include: ['tests/**/*.test.ts'], exclude: [...ALONE, ...NEEDS_ENGINE], maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        test: {
          ...EACH_FILE,
          name: 'alone',
          include: ALONE.map((pattern) => (pattern.endsWith('/**') ? `${pattern}/*.test.ts` : pattern)),
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
