/**
 * The suite has two sizes: the quick form `npm run test:faults` runs, and the full form
 * (FAULTS_FULL=1) with the numbers docs/reliability.md reports, which it also writes.
 */
export const FULL = process.env.FAULTS_FULL === '1';

export function scale<T>(quick: T, full: T): T {
  return FULL ? full : quick;
}
