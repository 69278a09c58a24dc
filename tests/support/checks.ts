import { expect } from 'vitest';

/** Named yes/no findings of one case, each a sentence that says what should hold. */
export type Checks = Record<string, boolean>;

/** Fails the test naming every check that did not hold. */
export function expectChecks(checks: Checks): void {
  const failed = Object.entries(checks).filter(([, ok]) => !ok);
  expect(failed.map(([name]) => name)).toEqual([]);
}
