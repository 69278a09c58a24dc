import { inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './scratchDatabase.js';

export type TestDatabase = ScratchDatabase;

/** A new, empty database on the suite's PostgreSQL, for one test file. */
export function createTestDatabase(): Promise<TestDatabase> {
  return createScratchDatabase(inject('adminDatabaseUrl'), 'test');
}
