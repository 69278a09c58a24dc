import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import pg from 'pg';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';

interface Migrating {
  url: string;
  schema: string;
  directory: string;
  logger: Logger;
}

/**
 * Brings `schema`, which holds its own migrations table, to its latest migration with Knex.
 * Replicas starting together take turns on an advisory lock, where Knex alone would fail all but
 * one ("Migration table is already locked"). Knex is loaded only when a migration is pending.
 */
export async function runMigrations(options: Migrating): Promise<void> {
  const { url, schema, directory } = options;
  const client = new pg.Client({ connectionString: url, application_name: `${schema} migrations` });
  await client.connect();
  try {
    if (await upToDate(client, schema, await migrationFiles(directory))) return;
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations of ${schema}`]);
    await migrate(options).catch((error: Error) => {
      if (!error.message.startsWith('The migration directory is corrupt')) throw error;
      throw new StartupError(
        `The schema ${schema} holds migrations this version does not have ` +
          `(${error.message.replace(/^.*missing: /, '')}): ` +
          `drop the schema, or start on another database or DATA_DIR`,
      );
    });
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}

async function upToDate(client: pg.Client, schema: string, files: string[]): Promise<boolean> {
  const table = `${schema}.knex_migrations`;
  const { rows } = await client.query('SELECT to_regclass($1) IS NOT NULL AS exists', [table]);
  if (!rows[0].exists) return false;
  const done = await client.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY name`);
  return done.rows.map(({ name }) => name).join() === files.map(migrationName).join();
}

async function migrate({ url, schema, directory, logger }: Migrating): Promise<void> {
  const { default: knex } = await import('knex');
  const log = (level: 'warn' | 'error' | 'debug') => (message: unknown) =>
    logger[level]({ knex: message });
  const db = knex({
    client: 'pg',
    connection: { connectionString: url, application_name: `${schema} migrations` },
    searchPath: [schema],
    pool: { min: 0, max: 1 },
    log: { warn: log('warn'), error: log('error'), deprecate: log('warn'), debug: log('debug') },
  });
  try {
    await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
    await db.migrate.latest({
      schemaName: schema,
      migrationSource: directoryMigrations(directory),
    });
  } finally {
    await db.destroy();
  }
}

/** A directory's migration files, in the order they run. */
async function migrationFiles(directory: string): Promise<string[]> {
  const files = await fs.readdir(directory);
  return files.filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts')).sort();
}

/** Knex compares names exactly: a compiled `.js` (npm start) keeps its source's `.ts` name. */
const migrationName = (file: string) => file.replace(/\.js$/, '.ts');

// Imported here rather than by Knex, whose loader hands `.ts` files to plain Node, so that they
// load through whatever runs the project (tsx, vitest).
const directoryMigrations = (directory: string): Knex.MigrationSource<string> => ({
  getMigrations: () => migrationFiles(directory),
  getMigrationName: migrationName,
  getMigration: (file) => import(pathToFileURL(path.join(directory, file)).href),
});
