import knex, { type Knex } from 'knex';
import type { DatabaseConfig } from './config.js';

export type Database = Knex;

/**
 * A Knex instance with its own pool whose unqualified table names resolve in `schema`, so the
 * two notes services can share one database without touching each other's tables. Every wait
 * is bounded by `timeoutMs`: a lost database answers an error, never a hang.
 */
export function createDatabase(url: string, schema: string, config: DatabaseConfig): Database {
  return knex({
    client: 'pg',
    connection: {
      connectionString: url,
      connectionTimeoutMillis: config.timeoutMs,
      statement_timeout: config.timeoutMs,
      query_timeout: config.timeoutMs + 1000,
      application_name: schema,
    },
    searchPath: [schema],
    pool: { min: 0, max: config.poolMax },
    acquireConnectionTimeout: config.timeoutMs,
  });
}

export async function runMigrations(db: Database, schema: string, directory: string): Promise<void> {
  await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
  await db.migrate.latest({ directory, schemaName: schema, loadExtensions: ['.ts', '.js'] });
}
