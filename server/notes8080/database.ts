import { fileURLToPath } from 'node:url';
import type { Database } from '../shared/database.js';
import { runMigrations } from '../shared/migrations.js';

/** The PostgreSQL schema that holds this service's `notes` table (and its migrations table). */
export const SCHEMA = 'notes8080';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/notes8080', import.meta.url));

export function migrate(db: Database): Promise<void> {
  return runMigrations(db, SCHEMA, MIGRATIONS);
}
