import type { Knex } from 'knex';

/**
 * The 8080 notes service's schema. The `notes` table is created if it does not exist; an existing
 * table only gets its missing columns added (docs/specs/notes-service-8080.md, section 1), and its
 * ids are widened to bigint, so that they never run out. Unqualified names: the connection's
 * search_path is the service's schema.
 */
const COLUMNS: Record<string, (table: Knex.AlterTableBuilder, knex: Knex) => void> = {
  id: (table) => table.bigIncrements('id'),
  title: (table) => table.string('title', 200).notNullable(),
  body: (table) => table.text('body').notNullable().defaultTo(''),
  created_at: (table, knex) =>
    table
      .timestamp('created_at', { useTz: true, precision: 3 })
      .notNullable()
      .defaultTo(knex.fn.now()),
  // The note's ETag: every change of the note raises it.
  version: (table, knex) => table.bigInteger('version').notNullable().defaultTo(knex.raw('1')),
};

/** What a row takes on disk besides its text: tuple header, other columns, index entry, slack. */
const NOTE_ROW_BYTES = 96;
const KEY_ROW_BYTES = 120;
/** More than the transactions that write at once (the pools of all instances together). */
const SHARDS = 32;

export async function up(knex: Knex): Promise<void> {
  const exists = await knex.schema.hasTable('notes');
  const missing: string[] = [];
  for (const column of Object.keys(COLUMNS)) {
    if (!exists || !(await knex.schema.hasColumn('notes', column))) missing.push(column);
  }
  const build = (table: Knex.AlterTableBuilder) =>
    missing.forEach((column) => COLUMNS[column]!(table, knex));
  if (missing.length > 0)
    await (exists
      ? knex.schema.alterTable('notes', build)
      : knex.schema.createTable('notes', build));
  await knex.raw('ALTER TABLE notes ALTER COLUMN id TYPE bigint');
  // Ids stop where JSON numbers stop being exact (2^53 - 1).
  await knex.raw(`
    DO $$ DECLARE ids text := pg_get_serial_sequence('notes', 'id'); BEGIN
      IF ids IS NOT NULL THEN
        EXECUTE format('ALTER SEQUENCE %s AS bigint MAXVALUE 9007199254740991', ids);
      END IF;
    END $$`);

  // Idempotency-Key: a create's answer, kept for the client that sent the key.
  await knex.raw(`
    CREATE TABLE idempotency_keys (
      client text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      answer text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (client, key)
    )`);
  await knex.raw('CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at)');

  // The functions name the schema they count in: a write from any connection is counted.
  const schema = (await knex.raw<{ rows: { name: string }[] }>('SELECT current_schema() AS name'))
    .rows[0]!.name;
  // The bytes stored, counted as rows come and go, in shards: a transaction counts in the shard
  // its id picks. PostgreSQL hands out transaction ids in order, so that transactions running
  // together count in different shards and do not wait for each other's commit. A write that takes
  // the sum past the connection's storage.max_bytes fails with disk_full and stores nothing. The
  // writes of other connections, not committed yet, are not in the sum: writes running together
  // may pass the cap by one body each.
  await knex.raw('CREATE TABLE storage_shards (shard smallint PRIMARY KEY, bytes bigint NOT NULL)');
  await knex.raw(`
    INSERT INTO storage_shards
    SELECT shard, CASE WHEN shard > 0 THEN 0 ELSE (SELECT coalesce(
      sum(octet_length(title) + octet_length(body) + ${NOTE_ROW_BYTES}), 0) FROM notes) END
    FROM generate_series(0, ${SHARDS - 1}) AS shard`);
  const shards = `${schema}.storage_shards`;
  const ours = `shard = pg_current_xact_id()::text::bigint % ${SHARDS}`;
  const measures = {
    notes: `octet_length(title) + octet_length(body) + ${NOTE_ROW_BYTES}`,
    idempotency_keys: `octet_length(client) + 2 * octet_length(key) + octet_length(fingerprint)
      + octet_length(answer) + ${KEY_ROW_BYTES}`,
  };
  const transitions = {
    INSERT: 'NEW TABLE AS added',
    UPDATE: 'OLD TABLE AS removed NEW TABLE AS added',
    DELETE: 'OLD TABLE AS removed',
  };
  for (const [table, bytes] of Object.entries(measures)) {
    // Once per statement, however many rows it writes. What frees room is not checked; the sum the
    // UPDATE reads is the one from before its own change, hence the delta added to it.
    await knex.raw(`
      CREATE FUNCTION ${table}_storage() RETURNS trigger AS $$
      DECLARE
        delta bigint := 0;
        total bigint;
      BEGIN
        IF TG_OP <> 'DELETE' THEN
          SELECT delta + coalesce(sum(${bytes}), 0) INTO delta FROM added;
        END IF;
        IF TG_OP <> 'INSERT' THEN
          SELECT delta - coalesce(sum(${bytes}), 0) INTO delta FROM removed;
        END IF;
        IF delta < 0 THEN
          UPDATE ${shards} SET bytes = bytes + delta WHERE ${ours};
        ELSIF delta > 0 THEN
          UPDATE ${shards} SET bytes = bytes + delta WHERE ${ours}
            RETURNING (SELECT sum(bytes) FROM ${shards}) + delta INTO total;
          IF total > current_setting('storage.max_bytes', true)::bigint THEN
            RAISE EXCEPTION 'storage cap of % bytes reached',
              current_setting('storage.max_bytes', true) USING ERRCODE = 'disk_full';
          END IF;
        END IF;
        RETURN NULL;
      END $$ LANGUAGE plpgsql`);
    for (const [event, tables] of Object.entries(transitions)) {
      await knex.raw(`
        CREATE TRIGGER ${table}_storage_${event.toLowerCase()} AFTER ${event} ON ${table}
        REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_storage()`);
    }
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const event of ['insert', 'update', 'delete'])
    await knex.raw(`DROP TRIGGER notes_storage_${event} ON notes`);
  await knex.raw('DROP TABLE storage_shards, idempotency_keys');
  await knex.raw('DROP FUNCTION notes_storage, idempotency_keys_storage');
}
