import net from 'node:net';
import { listenOnFreePort } from '../../harness/http.js';
import { loadConfig } from '../../server/config.js';
import { createDatabase, type Database } from '../../server/db/pool.js';
import { createLogger } from '../../server/logger.js';
import { runMigrations } from '../../server/db/migrations.js';
import type { Service } from '../../server/services.js';
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
  descriptor: Pick<Service<{ config: unknown }>, 'name' | 'database'>,
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
    `SELECT column_name, data_type, character_maximum_length, datetime_precision, is_nullable,
            column_default
       FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = 'notes'
      ORDER BY ordinal_position`,
    [schema],
  );
  return rows;
}
