import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The image and compose.yaml need a container engine: the container pass of .ci/run.
    exclude: process.env.TEST_IMAGES === '1' ? [] : ['tests/containers/**'],
    globalSetup: ['tests/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
