import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { notes8080 } from '../../server/services.js';
import type { Database } from '../../server/db/pool.js';
import { createOn, deps, TIMESTAMP, type Note, type Service } from '../support/notes8080.js';
import { notesColumns, serviceDatabase, type ServiceDatabase } from '../support/serviceDatabase.js';
import { startTestService } from '../support/services.js';

// Start-up migrations of the 8080 notes service: "the table is created if it does not exist;
// an existing table only gets missing columns added". Each case starts from its own database.

const SCHEMA = notes8080.database!.schema;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function freshDatabase(): Promise<ServiceDatabase> {
  const database = await serviceDatabase(notes8080);
  cleanups.push(database.drop);
  return database;
}

/**
 * Starts the service on a pool of `database` the way the process does: migrations first, then the
 * app.
 */
async function startService(
  database: ServiceDatabase,
  db: Database = database.connect(),
): Promise<Service> {
  await database.migrate();
  const service = await startTestService(notes8080, { db, deps });
  cleanups.push(service.close);
  return service;
}

const EXPECTED_COLUMNS = [
  {
    column_name: 'id',
    data_type: 'bigint',
    is_nullable: 'NO',
    column_default: expect.stringMatching(/^nextval\(/),
  },
  {
    column_name: 'title',
    data_type: 'character varying',
    character_maximum_length: 200,
    is_nullable: 'NO',
  },
  { column_name: 'body', data_type: 'text', is_nullable: 'NO', column_default: "''::text" },
  {
    column_name: 'created_at',
    data_type: 'timestamp with time zone',
    datetime_precision: 3,
    is_nullable: 'NO',
    column_default: expect.stringMatching(/^(CURRENT_TIMESTAMP|now\(\))$/),
  },
  { column_name: 'version', data_type: 'bigint', is_nullable: 'NO', column_default: '1' },
];

describe('notes8080 start-up migrations', () => {
  it('creates the schema and the notes table on a fresh database', async () => {
    const database = await freshDatabase();
    const db = database.connect();
    const service = await startService(database, db);

    expect(await notesColumns(db, SCHEMA)).toEqual(
      EXPECTED_COLUMNS.map((column) => expect.objectContaining(column)),
    );
    const { rows } = await db.query(
      `SELECT a.attname FROM pg_index i
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
        WHERE i.indrelid = '${SCHEMA}.notes'::regclass AND i.indisprimary`,
    );
    expect(rows).toEqual([{ attname: 'id' }]);

    const first = await createOn(service, { title: 'first', body: 'one' });
    const second = await createOn(service, { title: 'second' });
    expect(first).toEqual({
      id: 1,
      title: 'first',
      body: 'one',
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(second.id).toBeGreaterThan(first.id);
  });

  it('adds only the missing columns to an existing table and keeps its rows', async () => {
    const database = await freshDatabase();
    const db = database.connect();
    await db.query(`CREATE SCHEMA ${SCHEMA}`);
    await db.query(
      `CREATE TABLE ${SCHEMA}.notes (id serial PRIMARY KEY, title varchar(200) NOT NULL, tag text)`,
    );
    await db.query(`INSERT INTO ${SCHEMA}.notes (title, tag) VALUES ('written by hand', 'kept')`);

    const service = await startService(database, db);

    const columns = await notesColumns(db, SCHEMA);
    expect(columns.map((column) => column.column_name)).toEqual([
      'id',
      'title',
      'tag',
      'body',
      'created_at',
      'version',
    ]);
    expect(columns.filter((column) => column.column_name !== 'tag')).toEqual(
      EXPECTED_COLUMNS.map((column) => expect.objectContaining(column)),
    );

    const shown = await service.request('GET', '/notes/1');
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({
      id: 1,
      title: 'written by hand',
      body: '',
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const index = await service.request('GET', '/notes');
    expect((index.json as Note[]).map((note) => note.id)).toEqual([1]);
    expect((await db.query(`SELECT tag FROM ${SCHEMA}.notes`)).rows).toEqual([{ tag: 'kept' }]);

    // The table's own id sequence carries on.
    expect((await createOn(service, { title: 'added by the service' })).id).toBe(2);
  });

  it('changes nothing when run again at the next start', async () => {
    const database = await freshDatabase();
    const firstStart = database.connect();
    const first = await startService(database, firstStart);
    const note = await createOn(first, { title: 'survives a restart', body: 'b' });
    const columnsBefore = await notesColumns(firstStart, SCHEMA);

    const secondStart = database.connect();
    const again = await startService(database, secondStart);
    await database.migrate();

    expect(await notesColumns(secondStart, SCHEMA)).toEqual(columnsBefore);
    const shown = await again.request('GET', `/notes/${note.id}`);
    expect(shown.json).toEqual(note);
    const runs = async () =>
      (await secondStart.query(`SELECT count(*)::int AS runs FROM ${SCHEMA}.knex_migrations`)).rows;
    const migrations = (await fs.readdir(notes8080.database!.migrations)).length;
    expect(await runs()).toEqual([{ runs: migrations }]);
  });

  it('runs once when instances start together: others wait, then find nothing to do', async () => {
    const database = await freshDatabase();
    await Promise.all(Array.from({ length: 6 }, () => database.migrate()));
    const db = database.connect();
    const migrations = (await fs.readdir(notes8080.database!.migrations)).length;
    expect(
      (await db.query(`SELECT count(*)::int AS runs FROM ${SCHEMA}.knex_migrations`)).rows,
    ).toEqual([{ runs: migrations }]);
    expect(
      (
        await db.query(
          `SELECT count(*)::int AS columns FROM information_schema.columns
            WHERE table_schema = $1 AND table_name = 'notes'`,
          [SCHEMA],
        )
      ).rows[0].columns,
    ).toBeGreaterThan(0);
  });

  it('keeps to its own schema: a notes table elsewhere in the database is left alone', async () => {
    const database = await freshDatabase();
    const db = database.connect();
    await db.query('CREATE TABLE public.notes (id serial PRIMARY KEY, content text)');
    const publicColumns = await notesColumns(db, 'public');

    await startService(database, db);

    expect(await notesColumns(db, 'public')).toEqual(publicColumns);
    expect(publicColumns.map((column) => column.column_name)).toEqual(['id', 'content']);
    expect((await notesColumns(db, SCHEMA)).map((column) => column.column_name)).toEqual([
      'id',
      'title',
      'body',
      'created_at',
      'version',
    ]);
  });
});
