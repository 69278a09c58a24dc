import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import type { Database } from './database.js';

export async function runMigrations(db: Database, schema: string, directory: string): Promise<void> {
  await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
  await db.migrate.latest({ schemaName: schema, migrationSource: new DirectoryMigrations(directory) });
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
