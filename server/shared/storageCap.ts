import type { Knex } from 'knex';
import type { Database } from './database.js';

/**
 * The bytes a service stores, counted in its own schema as rows come and go, and capped: a write
 * that would take the count past the cap fails in PostgreSQL (`disk_full`, which the services
 * answer with 507) and stores nothing. The cap is the connection's `storage.max_bytes` setting
 * (the pool sets it from NOTES_MAX_BYTES); without it nothing is refused. The functions keep the
 * schema they were made in, so writes from any connection are counted.
 */
export interface Counted {
  table: string;
  /** The SQL that measures a row, given the row's name (`NEW`, `OLD`, or the table's own). */
  bytes: (row: string) => string;
}

/**
 * Where the count is kept: one row (`storage_usage`), or shards of it (`storage_shards`), one per
 * connection at a time (by its backend's pid), so that writers on different connections do not
 * wait for each other's commit on one counter row. The cap is checked against the sum of the
 * shards, which cannot see the writes of other transactions not yet committed: writes that run
 * together can pass the cap by what they add together, at most a pool's worth of bodies.
 */
const SHARDS = 16;
const COUNTERS = {
  single: { add: 'UPDATE storage_usage SET bytes = bytes + delta RETURNING bytes INTO total', total: '' },
  sharded: { add: `UPDATE storage_shards SET bytes = bytes + delta WHERE shard = pg_backend_pid() % ${SHARDS}`, total: 'SELECT sum(bytes) INTO total FROM storage_shards' },
};

/** The trigger function of a counted table, adding what each statement adds or removes, per statement over its transition tables. */
async function countingFunction(knex: Knex, { table, bytes }: Counted, counter: keyof typeof COUNTERS): Promise<void> {
  const sum = (rows: string) => `coalesce((SELECT sum(${bytes('row')}) FROM ${rows} AS row), 0)`;
  const { add, total } = COUNTERS[counter];
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ${table}_storage() RETURNS trigger AS $$
    DECLARE
      delta bigint;
      cap bigint := nullif(current_setting('storage.max_bytes', true), '')::bigint;
      total bigint;
    BEGIN
      IF TG_OP = 'INSERT' THEN delta := ${sum('added')};
      ELSIF TG_OP = 'UPDATE' THEN delta := ${sum('added')} - ${sum('removed')};
      ELSE delta := -${sum('removed')};
      END IF;
      IF delta = 0 THEN RETURN NULL; END IF;
      ${add};
      IF delta > 0 AND cap IS NOT NULL THEN
        ${total ? `${total};` : ''}
        IF total > cap THEN
          RAISE EXCEPTION 'storage cap of % bytes reached', cap USING ERRCODE = 'disk_full';
        END IF;
      END IF;
      RETURN NULL;
    END
    $$ LANGUAGE plpgsql SET search_path FROM CURRENT`);
}

/** What the counted tables' present rows take. */
const present = (tables: Counted[]) => tables.map(({ table, bytes }) => `(SELECT coalesce(sum(${bytes(table)}), 0) FROM ${table})`).join(' + ');

/** The count (one row) and its triggers, for a service's migration: the tables' present rows count from the start. */
export async function createStorageCap(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw('CREATE TABLE storage_usage (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), bytes bigint NOT NULL)');
  await knex.raw(`INSERT INTO storage_usage (bytes) SELECT ${present(tables)}`);
  for (const counted of tables) {
    await countingFunction(knex, counted, 'single');
    const { table } = counted;
    const transitions = { INSERT: 'NEW TABLE AS added', UPDATE: 'OLD TABLE AS removed NEW TABLE AS added', DELETE: 'OLD TABLE AS removed' };
    for (const [event, tablesOfIt] of Object.entries(transitions)) {
      await knex.raw(
        `CREATE TRIGGER ${table}_storage_${event.toLowerCase()} AFTER ${event} ON ${table} REFERENCING ${tablesOfIt} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_storage()`,
      );
    }
  }
}

/** The count moved from its one row into shards (see SHARDS), counted afresh from the tables' present rows. */
export async function shardStorageCount(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw('CREATE TABLE storage_shards (shard smallint PRIMARY KEY, bytes bigint NOT NULL)');
  await knex.raw(`INSERT INTO storage_shards SELECT shard, CASE WHEN shard = 0 THEN ${present(tables)} ELSE 0 END FROM generate_series(0, ${SHARDS - 1}) AS shard`);
  await knex.raw('DROP TABLE storage_usage');
  for (const counted of tables) await countingFunction(knex, counted, 'sharded');
}

/** Back to one row, for the migration's `down`. */
export async function unshardStorageCount(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw('CREATE TABLE storage_usage (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), bytes bigint NOT NULL)');
  await knex.raw(`INSERT INTO storage_usage (bytes) SELECT ${present(tables)}`);
  await knex.raw('DROP TABLE storage_shards');
  for (const counted of tables) await countingFunction(knex, counted, 'single');
}

/** The count made afresh from the tables' present rows, each measured as `tables` now say (the functions measure the same way). */
export async function recountStorage(knex: Knex, tables: Counted[]): Promise<void> {
  for (const counted of tables) await countingFunction(knex, counted, 'sharded');
  await knex.raw(`UPDATE storage_shards SET bytes = CASE WHEN shard = 0 THEN ${present(tables)} ELSE 0 END`);
}

/** What the count says now, in bytes: the sum of its shards. */
export async function storedBytes(db: Database): Promise<number> {
  const { rows } = await db.query<{ bytes: string }>('SELECT coalesce(sum(bytes), 0)::text AS bytes FROM storage_shards');
  return Number(rows[0]!.bytes);
}
