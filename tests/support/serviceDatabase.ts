import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import { listenOnFreePort } from '../../harness/http.js';
import { loadConfig } from '../../server/shared/config.js';
import { createDatabase, type Database } from '../../server/shared/database.js';
import { createLogger } from '../../server/shared/logger.js';
import { runMigrations } from '../../server/shared/migrations.js';
import type { ServiceDescriptor } from '../../server/shared/service.js';
import { createTestDatabase } from './services.js';

/** The pool settings the process uses by default (DB_POOL_MAX, DB_TIMEOUT_MS). */
const { poolMax, timeoutMs } = loadConfig({}).database;

export interface ServiceDatabase {
  /** The scratch database's URL. */
  url: string;
  /** The service's schema in it. */
  schema: string;
  /** Brings the schema to its latest migration, as the process does at every start. */
  migrate(): Promise<void>;
  /**
   * A new pool in the service's schema, as the service is given one, to pass as `db` to
   * startTestService. `url` reaches the same database another way (through a proxy, say).
   */
  connect(url?: string): Database;
  /** Closes every pool made by `connect` and drops the database. */
  drop(): Promise<void>;
}

/**
 * A scratch database for a service whose store the test prepares itself: tables written by
 * hand before the migrations, the migrations run when the test says, a pool that goes through a
 * proxy, a connection of its own holding a transaction. startTestService's ready-made database
 * (migrated, pool inside) serves every other case.
 */
export async function serviceDatabase(
  descriptor: Pick<ServiceDescriptor<{ config: unknown }>, 'name' | 'database'>,
): Promise<ServiceDatabase> {
  if (!descriptor.database) throw new Error(`${descriptor.name} keeps no tables in PostgreSQL`);
  const { schema, migrations } = descriptor.database;
  const scratch = await createTestDatabase();
  const logger = createLogger('silent');
  const pools: Database[] = [];
  return {
    url: scratch.url,
    schema,
    migrate: () => runMigrations({ url: scratch.url, schema, directory: migrations, logger }),
    connect(url = scratch.url) {
      const db = createDatabase({ url, schema, poolMax, timeoutMs, logger });
      pools.push(db);
      return db;
    },
    async drop() {
      for (const db of pools.splice(0)) await db.close();
      await scratch.drop();
    },
  };
}

/**
 * A pool on a loopback port whose server resets every connection at once: every statement fails
 * the way it does when the database is down. `port` is that port, to check that answers do not
 * give it away. Closing the pool closes the server too.
 */
export async function unreachableDatabase(
  schema: string,
  timeout = timeoutMs,
): Promise<{ db: Database; port: number }> {
  const refusing = net.createServer((socket) => socket.resetAndDestroy());
  const port = await listenOnFreePort(refusing, '127.0.0.1');
  const url = `postgres://nobody:secret@127.0.0.1:${port}/none`;
  const db = createDatabase({
    url,
    schema,
    poolMax,
    timeoutMs: timeout,
    logger: createLogger('silent'),
  });
  const close = async () => {
    await db.close();
    await new Promise((resolve) => refusing.close(resolve));
  };
  return { db: { ...db, close }, port };
}

/** The columns of `<schema>.notes` as information_schema describes them, in table order. */
export async function notesColumns(
  db: Database,
  schema: string,
): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query(
    `SELECT column_name, data_type, character_maximum_length, datetime_precision, is_nullable, column_default
       FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = 'notes'
      ORDER BY ordinal_position`,
    [schema],
  );
  return rows;
}

/**
 * The service's schema brought only up to the migrations before `firstLeftOut` (a file name), as an
 * older release left it.
 */
export async function migrateBefore(
  url: string,
  schema: string,
  directory: string,
  firstLeftOut: string,
): Promise<void> {
  const files = (await fs.readdir(directory))
    .filter((file) => file.endsWith('.ts') && file < firstLeftOut)
    .sort();
  const source: Knex.MigrationSource<string> = {
    getMigrations: async () => files,
    getMigrationName: (file) => file,
    getMigration: (file) => import(pathToFileURL(path.join(directory, file)).href),
  };
  const db = knex({
    client: 'pg',
    connection: url,
    searchPath: [schema],
    pool: { min: 0, max: 1 },
  });
  try {
    await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
    await db.migrate.latest({ schemaName: schema, migrationSource: source });
  } finally {
    await db.destroy();
  }
}
