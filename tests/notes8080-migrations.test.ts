import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../server/notes8080/app.js';
import { SCHEMA, migrate } from '../server/notes8080/database.js';
import { loadConfig } from '../server/shared/config.js';
import { createDatabase, type Database } from '../server/shared/database.js';
import { createLogger } from '../server/shared/logger.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { serve } from './support/http.js';

// Start-up migrations of the 8080 notes service: "the table is created if it does not exist;
// an existing table only gets missing columns added". Each case starts from its own database.

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function freshDatabase(): Promise<{ testDb: TestDatabase; connect: () => Database }> {
  const testDb = await createTestDatabase();
  cleanups.push(() => testDb.drop());
  const connect = () => {
    const db = createDatabase(testDb.url, SCHEMA, loadConfig({}).database);
    cleanups.push(() => db.destroy());
    return db;
  };
  return { testDb, connect };
}

/** Starts the service on `db` the way the process does: migrations first, then the app. */
async function startService(db: Database): Promise<string> {
  await migrate(db);
  const server = await serve(createApp({ db, bodyLimitBytes: 1024 * 1024, logger: createLogger('silent') }));
  cleanups.push(() => server.close());
  return server.url;
}

async function columnsOf(db: Database, schema: string) {
  const { rows } = await db.raw(
    `SELECT column_name, data_type, character_maximum_length, datetime_precision, is_nullable, column_default
       FROM information_schema.columns
      WHERE table_schema = ? AND table_name = 'notes'
      ORDER BY ordinal_position`,
    [schema],
  );
  return rows as Record<string, unknown>[];
}

const EXPECTED_COLUMNS = [
  {
    column_name: 'id',
    data_type: 'integer',
    is_nullable: 'NO',
    column_default: expect.stringMatching(/^nextval\(/),
  },
  { column_name: 'title', data_type: 'character varying', character_maximum_length: 200, is_nullable: 'NO' },
  { column_name: 'body', data_type: 'text', is_nullable: 'NO', column_default: "''::text" },
  {
    column_name: 'created_at',
    data_type: 'timestamp with time zone',
    datetime_precision: 3,
    is_nullable: 'NO',
    column_default: expect.stringMatching(/^(CURRENT_TIMESTAMP|now\(\))$/),
  },
];

async function createNote(url: string, note: object) {
  const response = await fetch(`${url}/notes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(note),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: number; title: string; body: string; created_at: string };
}

describe('notes8080 start-up migrations', () => {
  it('creates the schema and the notes table on a fresh database', async () => {
    const { connect } = await freshDatabase();
    const db = connect();
    const url = await startService(db);

    expect(await columnsOf(db, SCHEMA)).toEqual(EXPECTED_COLUMNS.map((column) => expect.objectContaining(column)));
    const { rows } = await db.raw(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
        WHERE i.indrelid = 'notes8080.notes'::regclass AND i.indisprimary`,
    );
    expect(rows).toEqual([{ attname: 'id' }]);

    const first = await createNote(url, { title: 'first', body: 'one' });
    const second = await createNote(url, { title: 'second' });
    expect(first).toEqual({ id: 1, title: 'first', body: 'one', created_at: expect.stringMatching(TIMESTAMP) });
    expect(second.id).toBeGreaterThan(first.id);
  });

  it('adds only the missing columns to an existing table and keeps its rows', async () => {
    const { connect } = await freshDatabase();
    const db = connect();
    await db.raw(`CREATE SCHEMA ${SCHEMA}`);
    await db.raw(`CREATE TABLE ${SCHEMA}.notes (id serial PRIMARY KEY, title varchar(200) NOT NULL, tag text)`);
    await db.raw(`INSERT INTO ${SCHEMA}.notes (title, tag) VALUES ('written by hand', 'kept')`);

    const url = await startService(db);

    const columns = await columnsOf(db, SCHEMA);
    expect(columns.map((column) => column.column_name)).toEqual(['id', 'title', 'tag', 'body', 'created_at']);
    expect(columns.filter((column) => column.column_name !== 'tag')).toEqual(
      EXPECTED_COLUMNS.map((column) => expect.objectContaining(column)),
    );

    const shown = await fetch(`${url}/notes/1`);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toEqual({
      id: 1,
      title: 'written by hand',
      body: '',
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const index = await fetch(`${url}/notes`);
    expect(((await index.json()) as { id: number }[]).map((note) => note.id)).toEqual([1]);
    expect(await db.withSchema(SCHEMA).from('notes').select('tag')).toEqual([{ tag: 'kept' }]);

    // The table's own id sequence carries on.
    expect((await createNote(url, { title: 'added by the service' })).id).toBe(2);
  });

  it('changes nothing when run again at the next start', async () => {
    const { connect } = await freshDatabase();
    const firstStart = connect();
    const url = await startService(firstStart);
    const note = await createNote(url, { title: 'survives a restart', body: 'b' });
    const columnsBefore = await columnsOf(firstStart, SCHEMA);

    const secondStart = connect();
    const again = await startService(secondStart);
    await migrate(secondStart);

    expect(await columnsOf(secondStart, SCHEMA)).toEqual(columnsBefore);
    const shown = await fetch(`${again}/notes/${note.id}`);
    expect(await shown.json()).toEqual(note);
    expect(await secondStart.withSchema(SCHEMA).from('knex_migrations').count({ runs: '*' })).toEqual([{ runs: '1' }]);
  });

  it('keeps to its own schema: a notes table elsewhere in the database is left alone', async () => {
    const { connect } = await freshDatabase();
    const db = connect();
    await db.raw('CREATE TABLE public.notes (id serial PRIMARY KEY, content text)');
    const publicColumns = await columnsOf(db, 'public');

    await startService(db);

    expect(await columnsOf(db, 'public')).toEqual(publicColumns);
    expect(publicColumns.map((column) => column.column_name)).toEqual(['id', 'content']);
    expect((await columnsOf(db, SCHEMA)).map((column) => column.column_name)).toEqual([
      'id',
      'title',
      'body',
      'created_at',
    ]);
  });
});
