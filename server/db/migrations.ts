import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';

/**
 * Brings `schema` to its latest migration with Knex, on a connection of its own that is closed
 * afterwards: the schema and its migrations table live in the schema itself, so services that
 * share a database never see each other's migrations. Instances that start together (replicas)
 * take turns: one migrates while the others wait on an advisory lock,
 * then find nothing left to do, where Knex alone would fail them ("Migration table is already
 * locked") or race to create the schema.
 */
export async function runMigrations(options: {
  url: string;
  schema: string;
  directory: string;
  logger: Logger;
}): Promise<void> {
  const lock = new pg.Client({
    connectionString: options.url,
    application_name: `${options.schema} migrations lock`,
  });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations of ${options.schema}`]);
    await migrate(options).catch((error: Error) => {
      // A schema migrated by a version whose migrations this one no longer has.
      if (!error.message.startsWith('The migration directory is corrupt')) throw error;
      throw new StartupError(
        `The schema ${options.schema} holds migrations this version does not have (${error.message.replace(/^.*missing: /, '')}): drop the schema, or start on another database or DATA_DIR`,
      );
    });
  } finally {
    // Ending the session releases the lock.
    await lock.end();
  }
}

async function migrate({
  url,
  schema,
  directory,
  logger,
}: {
  url: string;
  schema: string;
  directory: string;
  logger: Logger;
}): Promise<void> {
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
      migrationSource: new DirectoryMigrations(directory),
    });
  } finally {
    await db.destroy();
  }
}

/**
 * The migration files of a directory, imported by this module rather than by knex, so that
 * `.ts` files load through whatever loader runs the project (tsx, vitest); knex's own loader
 * hands them to plain Node, which cannot. Names are the file names, as knex's CLI records them.
 */
class DirectoryMigrations implements Knex.MigrationSource<string> {
  constructor(private readonly directory: string) {}

  async getMigrations(): Promise<string[]> {
    const files = await fs.readdir(this.directory);
    return files.filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts')).sort();
  }

  getMigrationName(file: string): string {
    // Knex compares names exactly: the compiled `.js` (npm start) keeps its source's `.ts` name.
    return file.replace(/\.js$/, '.ts');
  }

  getMigration(file: string): Promise<Knex.Migration> {
    return import(pathToFileURL(path.join(this.directory, file)).href);
  }
}
