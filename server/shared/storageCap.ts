import type { Knex } from 'knex';
import type { Database } from './database.js';

/**
 * The bytes a service stores, counted in its own schema as rows come and go, and capped: a write
 * that would take the count past the cap fails in PostgreSQL (`disk_full`, which the services
 * answer with 507) and stores nothing. The cap is the connection's `storage.max_bytes` setting
 * (the pool sets it from NOTES_MAX_BYTES); without it nothing is refused. The functions keep the
 * schema they were made in, so writes from any connection are counted.
 *
 * The count is kept in shards (`storage_shards`), one per connection at a time (by its backend's
 * pid), so that writers on different connections do not wait for each other's commit on one
 * counter row. Each shard also holds a reserve: bytes already checked against the cap, which its
 * writes spend without looking at the other shards. A write that finds its shard's reserve short
 * asks for more (`storage_reserve`): one connection at a time, it sums every shard's count and
 * reserve against the cap and takes a share of what is left, so the sum of the counts never
 * passes the cap, however many writes run together. Near the cap, reserves that other shards hold
 * unused are taken back first. A cap lowered while reserves are out is reached once they are spent.
 */
export interface Counted {
  table: string;
  /** The SQL that measures a row, given the row's name (`NEW`, `OLD`, or the table's own). */
  bytes: (row: string) => string;
}

/**
 * How the earlier migrations kept the count, per statement: in one row (`storage_usage`), then in
 * shards checked against their sum at every write, which could not see the writes of other
 * transactions not yet committed (writes that ran together could pass the cap by what they added
 * together).
 */
const SHARDS = 16;
const COUNTERS = {
  single: {
    add: 'UPDATE storage_usage SET bytes = bytes + delta RETURNING bytes INTO total',
    total: '',
  },
  sharded: {
    add: `UPDATE storage_shards SET bytes = bytes + delta WHERE shard = pg_backend_pid() % ${SHARDS}`,
    total: 'SELECT sum(bytes) INTO total FROM storage_shards',
  },
};

/** A counted table's triggers, one per statement, by the transition tables each event has. */
const STATEMENT_TRIGGERS = {
  INSERT: 'NEW TABLE AS added',
  UPDATE: 'OLD TABLE AS removed NEW TABLE AS added',
  DELETE: 'OLD TABLE AS removed',
};

/**
 * The PL/pgSQL of a counting trigger that sets `delta` to what its statement adds to the count
 * (the sum over its transition tables), and ends the trigger when that is nothing.
 */
function statementDelta(bytes: Counted['bytes']): string {
  const sum = (rows: string) => `coalesce((SELECT sum(${bytes('row')}) FROM ${rows} AS row), 0)`;
  return `IF TG_OP = 'INSERT' THEN delta := ${sum('added')};
      ELSIF TG_OP = 'UPDATE' THEN delta := ${sum('added')} - ${sum('removed')};
      ELSE delta := -${sum('removed')};
      END IF;
      IF delta = 0 THEN RETURN NULL; END IF;`;
}

/**
 * The statement trigger function of a counted table (earlier migrations), over its transition
 * tables.
 */
async function countingFunction(
  knex: Knex,
  { table, bytes }: Counted,
  counter: keyof typeof COUNTERS,
): Promise<void> {
  const { add, total } = COUNTERS[counter];
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ${table}_storage() RETURNS trigger AS $$
    DECLARE
      delta bigint;
      cap bigint := nullif(current_setting('storage.max_bytes', true), '')::bigint;
      total bigint;
    BEGIN
      ${statementDelta(bytes)}
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
const present = (tables: Counted[]) =>
  tables
    .map(({ table, bytes }) => `(SELECT coalesce(sum(${bytes(table)}), 0) FROM ${table})`)
    .join(' + ');

/**
 * The count (one row) and its triggers, for a service's migration: the tables' present rows count
 * from the start.
 */
export async function createStorageCap(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw(
    'CREATE TABLE storage_usage (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), bytes bigint NOT NULL)',
  );
  await knex.raw(`INSERT INTO storage_usage (bytes) SELECT ${present(tables)}`);
  for (const counted of tables) {
    await countingFunction(knex, counted, 'single');
    const { table } = counted;
    for (const [event, tablesOfIt] of Object.entries(STATEMENT_TRIGGERS)) {
      await knex.raw(
        `CREATE TRIGGER ${table}_storage_${event.toLowerCase()} AFTER ${event} ON ${table} REFERENCING ${tablesOfIt} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_storage()`,
      );
    }
  }
}

/**
 * The count moved from its one row into shards (see SHARDS), counted afresh from the tables'
 * present rows.
 */
export async function shardStorageCount(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw('CREATE TABLE storage_shards (shard smallint PRIMARY KEY, bytes bigint NOT NULL)');
  await knex.raw(
    `INSERT INTO storage_shards SELECT shard, CASE WHEN shard = 0 THEN ${present(tables)} ELSE 0 END FROM generate_series(0, ${SHARDS - 1}) AS shard`,
  );
  await knex.raw('DROP TABLE storage_usage');
  for (const counted of tables) await countingFunction(knex, counted, 'sharded');
}

/** Back to one row, for the migration's `down`. */
export async function unshardStorageCount(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw(
    'CREATE TABLE storage_usage (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), bytes bigint NOT NULL)',
  );
  await knex.raw(`INSERT INTO storage_usage (bytes) SELECT ${present(tables)}`);
  await knex.raw('DROP TABLE storage_shards');
  for (const counted of tables) await countingFunction(knex, counted, 'single');
}

/**
 * The count made afresh from the tables' present rows, each measured as `tables` now say (the
 * functions measure the same way).
 */
export async function recountStorage(knex: Knex, tables: Counted[]): Promise<void> {
  for (const counted of tables) await countingFunction(knex, counted, 'sharded');
  await knex.raw(
    `UPDATE storage_shards SET bytes = CASE WHEN shard = 0 THEN ${present(tables)} ELSE 0 END`,
  );
}

/** What the count says now, in bytes: the sum of its shards. */
export async function storedBytes(db: Database): Promise<number> {
  const { rows } = await db.query<{ bytes: string }>(
    'SELECT coalesce(sum(bytes), 0)::text AS bytes FROM storage_shards',
  );
  return Number(rows[0]!.bytes);
}

/**
 * What a shard is given when its reserve runs short: what the write needs, and this share of what
 * is left under the cap. Far from the cap a shard asks again only after many writes; near it, the
 * shares shrink with what is left, and every byte can still be given out.
 */
const RESERVE_SHARE = 32;

/**
 * The count with reserves (see the top of this module), for a service's migration: the shards get
 * their reserves, and each counted table's triggers (still one per statement, over its transition
 * tables: a trigger per row would update its shard once per row, and a statement of many rows
 * would make that row's versions pile up within one transaction, each update slower than the
 * last) spend them. The functions name the schema they count in, rather than setting their
 * search_path at every call, which costs a write as much as the count itself.
 */
export async function reserveStorage(knex: Knex, tables: Counted[]): Promise<void> {
  const schema = await currentSchema(knex);
  const shards = `${schema}.storage_shards`;
  const here = `pg_backend_pid() % ${SHARDS}`;
  await knex.raw('ALTER TABLE storage_shards ADD COLUMN reserve bigint NOT NULL DEFAULT 0');
  await knex.raw(`
    CREATE FUNCTION storage_reserve(delta bigint, cap bigint) RETURNS void AS $$
    DECLARE
      spare bigint;
      place smallint;
    BEGIN
      -- One connection at a time, so that the sum below sees every reserve given before.
      PERFORM pg_advisory_xact_lock(hashtext('${shards}'));
      SELECT cap - sum(bytes + reserve) INTO spare FROM ${shards};
      IF spare < delta THEN
        -- What other shards hold unused comes back, but for shards that a write is spending now.
        UPDATE ${shards} SET reserve = 0 WHERE shard IN (SELECT shard FROM ${shards} WHERE reserve > 0 FOR UPDATE SKIP LOCKED);
        SELECT cap - sum(bytes + reserve) INTO spare FROM ${shards};
        IF spare < delta THEN
          RAISE EXCEPTION 'storage cap of % bytes reached', cap USING ERRCODE = 'disk_full';
        END IF;
      END IF;
      -- This connection's shard, or, while another write holds it, one that none holds.
      SELECT shard INTO place FROM ${shards} ORDER BY shard <> ${here}, shard LIMIT 1 FOR UPDATE SKIP LOCKED;
      UPDATE ${shards} SET bytes = bytes + delta, reserve = reserve + (spare - delta) / ${RESERVE_SHARE} WHERE shard = coalesce(place, ${here});
    END
    $$ LANGUAGE plpgsql`);
  for (const { table, bytes } of tables) {
    await knex.raw(`
      CREATE OR REPLACE FUNCTION ${table}_storage() RETURNS trigger AS $$
      DECLARE
        delta bigint;
        cap bigint;
      BEGIN
        ${statementDelta(bytes)}
        cap := nullif(current_setting('storage.max_bytes', true), '')::bigint;
        IF delta < 0 OR cap IS NULL THEN
          UPDATE ${shards} SET bytes = bytes + delta WHERE shard = ${here};
          RETURN NULL;
        END IF;
        UPDATE ${shards} SET bytes = bytes + delta, reserve = reserve - delta WHERE shard = ${here} AND reserve >= delta;
        IF NOT FOUND THEN PERFORM ${schema}.storage_reserve(delta, cap); END IF;
        RETURN NULL;
      END
      $$ LANGUAGE plpgsql`);
  }
}

/** Back to the count without reserves, for the migration's `down`. */
export async function unreserveStorage(knex: Knex, tables: Counted[]): Promise<void> {
  for (const counted of tables) await countingFunction(knex, counted, 'sharded');
  await knex.raw('DROP FUNCTION storage_reserve');
  await knex.raw('ALTER TABLE storage_shards DROP COLUMN reserve');
}

const currentSchema = async (knex: Knex) =>
  (await knex.raw<{ rows: { schema: string }[] }>('SELECT current_schema() AS schema')).rows[0]!
    .schema;
