import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpRelay } from '../harness/tcpRelay.js';
import { notes8000, notes8080 } from '../server/services.js';
import type { Database } from '../server/db/pool.js';
import { config, NOTES_SERVICES, statusAndBody, useNotesService } from './support/notesServices.js';
import * as store from './support/serviceDatabase.js';
import { startTestService } from './support/services.js';

// Each service's table: made or completed by its migrations at every start, in the service's own
// schema; ids and versions that do not run out; a database that fails or goes away.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
type Descriptor = typeof notes8080;
async function freshDatabase(descriptor: Descriptor) {
  const database = await store.serviceDatabase(descriptor);
  cleanups.push(database.drop);
  return { database, db: database.connect(), schema: database.schema };
}
/** The service on `db`, as the process starts it: migrations first, then the app. */
async function start(descriptor: Descriptor, database: store.ServiceDatabase, db: Database) {
  await database.migrate();
  const service = await startTestService(descriptor, { db, deps: { config } });
  cleanups.push(service.close);
  const create = async (json: object) => {
    const answer = await service.request('POST', '/notes', { json });
    expect(answer.status).toBe(201);
    return answer.json as { id: number };
  };
  return { ...service, create };
}
const names = async (db: Database, schema: string) =>
  (await store.notesColumns(db, schema)).map((column) => column.column_name).join(' ');

const column = (column_name: string, data_type: string, more: object = {}) =>
  expect.objectContaining({ column_name, data_type, is_nullable: 'NO', ...more });
const title = (length: number) =>
  column('title', 'character varying', { character_maximum_length: length });
const time = (name: string, precision: number) =>
  column(name, 'timestamp with time zone', {
    datetime_precision: precision,
    column_default: expect.stringMatching(/^(now\(\)|CURRENT_TIMESTAMP)$/),
  });
const ID = column('id', 'bigint', { column_default: expect.stringMatching(/^nextval\(/) });
const VERSION = column('version', 'bigint', { column_default: '1' });
const COLUMNS = {
  notes8080: [ID, title(200), column('body', 'text', { column_default: "''::text" })],
  notes8000: [ID, title(100), column('content', 'text'), time('created_at', 6)],
};
COLUMNS.notes8080.push(time('created_at', 3), VERSION);
COLUMNS.notes8000.push(time('updated_at', 6), VERSION);

describe.each(NOTES_SERVICES)('$name and its store', ({ name, descriptor, note, ...shape }) => {
  const SCHEMA = descriptor.database.schema;
  const { service, call } = useNotesService(descriptor);

  it('migrates a fresh database once, however many instances start together', async () => {
    const { database, db } = await freshDatabase(descriptor);
    // In its own schema: a notes table elsewhere in the database is left alone.
    await db.query('CREATE TABLE public.notes (id serial PRIMARY KEY, content text)');
    await Promise.all(Array.from({ length: 6 }, () => database.migrate()));
    const columns = await store.notesColumns(db, SCHEMA);
    expect(columns).toEqual(COLUMNS[name]);
    const primaryKey = `SELECT a.attname FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
      WHERE i.indrelid = '${SCHEMA}.notes'::regclass AND i.indisprimary`;
    expect((await db.query(primaryKey)).rows).toEqual([{ attname: 'id' }]);
    expect(await names(db, 'public')).toBe('id content');
    const runs = `SELECT count(*)::int AS runs FROM ${SCHEMA}.knex_migrations`;
    const migrations = (await fs.readdir(descriptor.database.migrations)).length;
    expect((await db.query(runs)).rows).toEqual([{ runs: migrations }]);

    const first = await start(descriptor, database, db);
    const stamp = expect.stringMatching(shape.timestamp);
    const stamps = { created_at: stamp, ...(name === 'notes8000' && { updated_at: stamp }) };
    const one = await first.create(note('first', 'one'));
    expect(one).toEqual({ id: 1, ...note('first', 'one'), ...stamps });
    expect((await first.create(note('second'))).id).toBeGreaterThan(1);
    // The next start changes nothing, and finds the notes.
    const again = await start(descriptor, database, database.connect());
    expect(await store.notesColumns(db, SCHEMA)).toEqual(columns);
    expect((await db.query(runs)).rows).toEqual([{ runs: migrations }]);
    expect((await again.request('GET', '/notes/1')).json).toEqual(one);
  });

  it(`answers 500 {${shape.error}} to all when the database refuses connections`, async () => {
    const timeoutMs = 1_000;
    const { db, port } = await store.unreachableDatabase(SCHEMA, timeoutMs);
    cleanups.push(db.close);
    const broken = await startTestService(descriptor, { db, deps: { config } });
    cleanups.push(broken.close);
    for (const [method, path, json] of [
      ['POST', '/notes', note('x')],
      ['GET', '/notes'],
      ['GET', '/notes/1'],
      ['PUT', '/notes/1', note('x')],
      ['DELETE', '/notes/1'],
    ] as const) {
      broken.logs.clear();
      const answer = await broken.request(method, path, { json });
      const failed = [500, { [shape.error]: 'database unavailable' }];
      expect(statusAndBody(answer), `${method} ${path}`).toEqual(failed);
      // Which database, the answer does not say.
      expect(answer.text).not.toContain(String(port));
      // A wait for a connection, then one for the statement: each bounded by the timeout.
      expect(answer.ms, `${method} ${path}`).toBeLessThan(2 * timeoutMs + 1_000);
      // Each failure logged once, with its error.
      const logged = expect.objectContaining({ message: expect.any(String) });
      expect(broken.logs.errors()).toEqual([expect.objectContaining({ err: logged })]);
    }
    // Input is still validated without the store, and liveness answered.
    expect((await broken.request('POST', '/notes', { json: {} })).status).toBe(shape.invalid);
    expect((await broken.request('GET', '/live')).status).toBe(200);
    const health = name === 'notes8000' && statusAndBody(await broken.request('GET', '/health'));
    if (health) expect(health).toEqual([200, { status: 'healthy' }]);
  });

  it('gives 100 concurrent creates 100 distinct ids, all listed', async () => {
    const creates = Array.from({ length: 100 }, (_, i) => note(`c${i}`));
    const answers = await Promise.all(creates.map((json) => call('POST', '/notes', { json })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(100).fill(201));
    const ids = answers.map((answer) => (answer.json as { id: number }).id);
    expect(new Set(ids).size).toBe(100);
    const listed = ((await call('GET', '/notes')).json as { id: number }[]).map((item) => item.id);
    expect(ids.filter((id) => !listed.includes(id))).toEqual([]);
  });

  it('creates, reads, updates and deletes notes past id 2^31, and versions past it', async () => {
    await service().db.query("SELECT setval(pg_get_serial_sequence('notes', 'id'), 2147483647)");
    const answer = await call('POST', '/notes', { json: note('past 2^31') });
    const { id } = answer.json as { id: number };
    expect([answer.status, id]).toEqual([201, 2 ** 31]);
    expect((await call('GET', `/notes/${id}`)).json).toEqual(answer.json);
    expect((await call('PUT', `/notes/${id}`, { json: note('edited') })).status).toBe(200);
    // Its version, raised by every change, does not run out either.
    await service().db.query('UPDATE notes SET version = 2147483647 WHERE id = $1', [id]);
    const headers = { 'if-match': '"2147483647"' };
    const edited = await call('PUT', `/notes/${id}`, { json: note('version 2^31'), headers });
    expect([edited.status, edited.headers.etag]).toEqual([200, '"2147483648"']);
    expect((await call('DELETE', `/notes/${id}`)).status).toBeLessThan(300);
    expect((await call('GET', `/notes/${2 ** 53}`)).status).toBe(404);
  });
});

describe('an existing notes table', () => {
  it('notes8080 adds only the missing columns, keeping the rows and the id sequence', async () => {
    const { database, db, schema } = await freshDatabase(notes8080);
    await db.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.notes (
      id serial PRIMARY KEY, title varchar(200) NOT NULL, tag text)`);
    await db.query(`INSERT INTO ${schema}.notes (title, tag) VALUES ('written by hand', 'kept')`);
    const service = await start(notes8080, database, db);
    expect(await names(db, schema)).toBe('id title tag body created_at version');
    const columns = await store.notesColumns(db, schema);
    expect(columns.filter((column) => column.column_name !== 'tag')).toEqual(COLUMNS.notes8080);
    const created_at = expect.stringMatching(NOTES_SERVICES[0].timestamp);
    const one = { id: 1, title: 'written by hand', body: '', created_at };
    expect(statusAndBody(await service.request('GET', '/notes/1'))).toEqual([200, one]);
    expect((await service.request('GET', '/notes')).json).toEqual([one]);
    expect((await db.query(`SELECT tag FROM ${schema}.notes`)).rows).toEqual([{ tag: 'kept' }]);
    expect((await service.create({ title: 'added by the service' })).id).toBe(2);
  });

  it('notes8000 keeps its rows, and refreshes updated_at on them', async () => {
    const { database, db, schema } = await freshDatabase(notes8000);
    await db.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.notes (
      id serial PRIMARY KEY, title varchar(100) NOT NULL, content text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await db.query(`INSERT INTO ${schema}.notes (title, content, updated_at)
      VALUES ('old', 'row', '2020-01-01')`);
    const service = await start(notes8000, database, db);
    const updated = await service.request('PUT', '/notes/1', { json: { title: 'new' } });
    expect(updated.json).toMatchObject({ id: 1, title: 'new', content: 'row' });
    expect((updated.json as { updated_at: string }).updated_at.startsWith('2020')).toBe(false);
  });
});

describe('notes8080 when its database goes away', () => {
  it('answers 500 while it is gone, and serves again by itself once it is back', async () => {
    const { database } = await freshDatabase(notes8080);
    const target = new URL(database.url);
    const relay = await startTcpRelay({ host: target.hostname, port: Number(target.port) });
    cleanups.push(relay.close);
    const db = database.connect(relay.through(database.url));
    const service = await start(notes8080, database, db);
    const note = await service.create({ title: 'before the outage' });
    relay.cut();
    const during = await service.request('GET', `/notes/${note.id}`);
    expect([during.status, during.json]).toEqual([500, { error: 'database unavailable' }]);
    relay.restore();
    expect(statusAndBody(await service.request('GET', `/notes/${note.id}`))).toEqual([200, note]);

    // A list the database fails midway is cut short, never left hanging, and the cut logged.
    // About 13 MB of JSON: far more than the socket buffers hold while the client waits.
    await db.query(`INSERT INTO notes (title, body)
      SELECT 'note ' || i, repeat('x', 200) FROM generate_series(1, 50000) AS i`);
    service.logs.clear();
    // fetch rather than service.request: the answer must stay unread while the store fails,
    // and an answer cut short has no body to check against the contract.
    const response = await fetch(`${service.url}/notes`);
    // Should the first batch fail, the failure the service logged says why.
    expect(response.status, JSON.stringify(service.logs.errors())).toBe(200);
    await db.query('ALTER TABLE notes RENAME TO notes_gone');
    await expect(response.text()).rejects.toThrow();
    expect(service.logs.errors()).toEqual([expect.objectContaining({ msg: 'answer cut short' })]);
  }, 20_000);
});
