import { defineConfig } from 'vitest/config';

/**
 * `npm test` (project `services`) runs every behaviour of the services and their pages;
 * `npm run test:faults` (the `faults` projects) runs what takes long or shares the machine badly:
 * whole processes and their signals, floods, faults, long timeouts, the image and compose.yaml.
 */
const FAULTS = 'tests/faults/**/*.test.ts';
/**
 * Files whose bounds on time or memory are tight enough that a neighbour's load would decide them:
 * one at a time, with nothing beside them. A file that only loads the services, or whose bound is a
 * timeout seconds wide, runs two at a time.
 */
const ALONE = [
  'tests/faults/development.test.ts',
  'tests/faults/loginFloodFairness.test.ts',
  'tests/faults/lighthouse.test.ts',
  'tests/faults/timing.test.ts',
  'tests/faults/hostileLoad/bigList.test.ts',
  'tests/faults/hostileLoad/idleConnections.test.ts',
  'tests/faults/hostileLoad/loginFlood.test.ts',
];
/** The image and compose.yaml need a container engine (TEST_IMAGES=1). */
const NEEDS_ENGINE = process.env.TEST_IMAGES === '1' ? [] : ['tests/faults/containers/**'];

const EACH_FILE = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    // Once for every project: one PostgreSQL for the whole run.
    globalSetup: ['tests/support/globalSetup.ts'],
    // The modules as transformed for the workers, kept in node_modules/.experimental-vitest-cache
    // between runs, by their content (Vitest 5's default): a run transforms only what changed.
    experimental: { fsModuleCache: true },
    projects: [
      {
        test: {
          ...EACH_FILE,
          name: 'services',
          include: ['tests/**/*.test.ts'],
          exclude: [FAULTS],
          maxWorkers: 2,
          // The files share each worker's modules: loading Koa, pg and the services once per worker
          // rather than once per file. Each file still starts its own services and databases.
          isolate: false,
        },
      },
      {
        test: {
          ...EACH_FILE,
          name: 'faults',
          include: [FAULTS],
          exclude: [...ALONE, ...NEEDS_ENGINE],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...EACH_FILE,
          name: 'faults-alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
