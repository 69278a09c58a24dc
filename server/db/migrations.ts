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
 * Brings `schema` to its latest migration with Knex: the schema and its migrations table live in
 * the schema itself, so services that share a database never see each other's migrations.
 * Instances that start together (replicas) take turns on an advisory lock: one migrates, the
 * others then find nothing left to do, where Knex alone would fail them ("Migration table is
 * already locked"). Knex is loaded only when a migration is pending: at most starts none is, and
 * loading it takes a tenth of a second.
 */
export async function runMigrations(options: Migrating): Promise<void> {
  const client = new pg.Client({
    connectionString: options.url,
    application_name: `${options.schema} migrations`,
  });
  await client.connect();
  try {
    const files = await migrationFiles(options.directory);
    if (await upToDate(client, options.schema, files)) return;
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [
      `migrations of ${options.schema}`,
    ]);
    await migrate(options).catch((error: Error) => {
      // A schema migrated by a version whose migrations this one no longer has.
      if (!error.message.startsWith('The migration directory is corrupt')) throw error;
      throw new StartupError(
        `The schema ${options.schema} holds migrations this version does not have (${error.message.replace(/^.*missing: /, '')}): drop the schema, or start on another database or DATA_DIR`,
      );
    });
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}

/** Whether the schema's migrations table names exactly the migrations of `files`. */
async function upToDate(client: pg.Client, schema: string, files: string[]): Promise<boolean> {
  const table = `${schema}.knex_migrations`;
  const { rows } = await client.query<{ exists: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS exists',
    [table],
  );
  if (!rows[0]!.exists) return false;
  const done = await client.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY name`);
  const names = files.map(migrationName);
  return done.rows.length === names.length && done.rows.every((row, i) => row.name === names[i]);
}

async function migrate({ url, schema, directory, logger }: Migrating): Promise<void> {
  const { default: knex } = await import('knex');
  const db = knex({
    client: 'pg',
    connection: { connectionString: url, application_name: `${schema} migrations` },
    searchPath: [schema],
    pool: { min: 0, max: 1 },
    // Knex's own warnings go to the log, not to the console.
    log: {
      warn: (message: unknown) => logger.warn({ knex: message }),
      error: (message: unknown) => logger.error({ knex: message }),
      deprecate: (message: unknown) => logger.warn({ knex: message }),
      debug: (message: unknown) => logger.debug({ knex: message }),
    },
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

/**
 * The migrations of a directory, imported by this module rather than by knex, so that `.ts` files
 * load through whatever loader runs the project (tsx, vitest); knex's own loader hands them to
 * plain Node, which cannot.
 */
const directoryMigrations = (directory: string): Knex.MigrationSource<string> => ({
  getMigrations: () => migrationFiles(directory),
  getMigrationName: migrationName,
  getMigration: (file) => import(pathToFileURL(path.join(directory, file)).href),
});
