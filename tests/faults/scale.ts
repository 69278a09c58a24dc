/**
 * The suite has two sizes: the quick form that runs inside `npm test`, and the full form (`npm run
 * test:faults`, FAULTS_FULL=1) with the numbers docs/reliability.md reports, which it also writes.
 */
export const FULL = process.env.FAULTS_FULL === '1';

export function scale<T>(quick: T, full: T): T {
  return FULL ? full : quick;
}
