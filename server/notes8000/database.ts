import { fileURLToPath } from 'node:url';
import type { Database } from '../shared/database.js';
import { runMigrations } from '../shared/migrations.js';

/** The PostgreSQL schema that holds this service's `notes` table (and its migrations table). */
export const SCHEMA = 'notes8000';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/notes8000', import.meta.url));

export function migrate(db: Database): Promise<void> {
  return runMigrations(db, SCHEMA, MIGRATIONS);
}
