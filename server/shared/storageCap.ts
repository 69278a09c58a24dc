import type { Knex } from 'knex';

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

/** The count and its triggers, for a service's migration: the tables' present rows count from the start. */
export async function createStorageCap(knex: Knex, tables: Counted[]): Promise<void> {
  await knex.raw('CREATE TABLE storage_usage (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), bytes bigint NOT NULL)');
  const present = tables.map(({ table, bytes }) => `(SELECT coalesce(sum(${bytes(table)}), 0) FROM ${table})`).join(' + ');
  await knex.raw(`INSERT INTO storage_usage (bytes) SELECT ${present}`);
  for (const { table, bytes } of tables) {
    const sum = (rows: string) => `coalesce((SELECT sum(${bytes('row')}) FROM ${rows} AS row), 0)`;
    // Once per statement, over its transition tables: a bulk insert updates the count once, not per row.
    await knex.raw(`
      CREATE FUNCTION ${table}_storage() RETURNS trigger AS $$
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
        UPDATE storage_usage SET bytes = bytes + delta RETURNING bytes INTO total;
        IF delta > 0 AND total > cap THEN
          RAISE EXCEPTION 'storage cap of % bytes reached', cap USING ERRCODE = 'disk_full';
        END IF;
        RETURN NULL;
      END
      $$ LANGUAGE plpgsql SET search_path FROM CURRENT`);
    const transitions = { INSERT: 'NEW TABLE AS added', UPDATE: 'OLD TABLE AS removed NEW TABLE AS added', DELETE: 'OLD TABLE AS removed' };
    for (const [event, tablesOfIt] of Object.entries(transitions)) {
      await knex.raw(
        `CREATE TRIGGER ${table}_storage_${event.toLowerCase()} AFTER ${event} ON ${table} REFERENCING ${tablesOfIt} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_storage()`,
      );
    }
  }
}
