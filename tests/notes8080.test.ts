import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Request } from '../harness/http.js';
import { withClient } from '../harness/postgres.js';
import type { StartedService } from '../harness/service.js';
import { notes8080 } from '../server/notes8080/index.js';
import type { NotesDeps } from '../server/shared/service.js';
import { loadConfig } from '../server/shared/config.js';
import type { Database } from '../server/shared/database.js';
import { freeLoopbackPort } from '../server/shared/embeddedPostgres.js';
import { serviceDatabase, unreachableDatabase } from './support/serviceDatabase.js';
import { startTestService } from './support/services.js';

// The 8080 notes service (notes-service-8080.md), over HTTP. Every answer is also checked
// against the service's own OpenAPI document (service.request).

interface Note {
  id: number;
  title: string;
  body: string;
  created_at: string;
}

type Service = StartedService<NotesDeps>;
type Options = Omit<Request, 'method' | 'path'>;

const NOT_FOUND = { error: 'ノートが見つかりません' };
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const JSON_TYPE = /^application\/json/;
const BODY_LIMIT = loadConfig({}).notes.bodyLimitBytes;
const deps = { config: loadConfig({}).notes };
/** Raw JSON text, sent as it is with a JSON content type. */
const jsonText = (body: string, contentType = 'application/json'): Options => ({ body, headers: { 'content-type': contentType } });

async function createOn(service: Service, input: unknown): Promise<Note> {
  const response = await service.request('POST', '/notes', { json: input });
  expect(response.status).toBe(201);
  return response.json as Note;
}

describe('notes8080 service', () => {
  let service: Service;
  const call = (method: string, path: string, options?: Options) => service.request(method, path, options);
  const create = (input: unknown) => createOn(service, input);
  const storedNotes = async () => (await call('GET', '/notes')).json as Note[];

  beforeAll(async () => {
    service = await startTestService(notes8080, { deps });
  });

  afterAll(async () => {
    await service?.close();
  });

  beforeEach(() => {
    service.logs.clear();
  });

  describe('index', () => {
    it('answers an empty array when there are no notes', async () => {
      // A service of its own: the suite's store holds the notes of the other tests.
      const empty = await startTestService(notes8080, { deps });
      try {
        const response = await empty.request('GET', '/notes');
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(JSON_TYPE);
        expect(response.json).toEqual([]);
      } finally {
        await empty.close();
      }
    });

    it('lists every note, newest id first', async () => {
      const created = [await create({ title: 'a' }), await create({ title: 'b' }), await create({ title: 'c' })];
      const notes = await storedNotes();
      const ids = notes.map((note) => note.id);
      expect(ids).toEqual([...ids].sort((x, y) => y - x));
      expect(notes.slice(0, 3)).toEqual([...created].reverse());
    });

    it('sends a list longer than one read batch whole: every note once, newest first', async () => {
      await service.db.query(`INSERT INTO notes (title, body) SELECT 'bulk ' || i, 'text' FROM generate_series(1, 2500) AS i`);
      const stored = (await service.db.query<{ id: number }>('SELECT id FROM notes ORDER BY id DESC')).rows.map((row) => row.id);
      const response = await call('GET', '/notes');
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      const notes = response.json as Note[];
      expect(notes.map((note) => note.id)).toEqual(stored);
      expect(notes.find((note) => note.title === 'bulk 1')).toMatchObject({ body: 'text', created_at: expect.stringMatching(/Z$/) });
    });
  });

  describe('create', () => {
    it('answers 201 with the stored note, as a later read shows it', async () => {
      const response = await call('POST', '/notes', { json: { title: 'Groceries', body: 'milk, eggs' } });
      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      const note = response.json as Note;
      expect(note).toEqual({ id: expect.any(Number), title: 'Groceries', body: 'milk, eggs', created_at: expect.stringMatching(TIMESTAMP) });
      expect(Math.abs(Date.parse(note.created_at) - Date.now())).toBeLessThan(60_000);
      expect((await call('GET', `/notes/${note.id}`)).json).toEqual(note);
      expect((await storedNotes())[0]).toEqual(note);
    });

    it('assigns increasing ids', async () => {
      const first = await create({ title: 'first' });
      const second = await create({ title: 'second' });
      expect(second.id).toBeGreaterThan(first.id);
    });

    it.each([
      ['omitted', { title: 'no body' }],
      ['null', { title: 'null body', body: null }],
      ['empty', { title: 'empty body', body: '' }],
    ])('stores an empty body when it is %s', async (_, input) => {
      const note = await create(input);
      expect(note.body).toBe('');
      expect(((await call('GET', `/notes/${note.id}`)).json as Note).body).toBe('');
    });

    it('ignores id, created_at and unknown fields in the body', async () => {
      const note = await create({ id: 999_999, created_at: '2000-01-01T00:00:00.000Z', title: 't', colour: 'red' });
      expect(note.id).not.toBe(999_999);
      expect(note.created_at).not.toBe('2000-01-01T00:00:00.000Z');
      expect(Object.keys(note).sort()).toEqual(['body', 'created_at', 'id', 'title']);
      expect((await call('GET', '/notes/999999')).status).toBe(404);
    });

    it.each([
      ['200 ASCII characters', 'a'.repeat(200)],
      ['200 Japanese characters', 'あ'.repeat(200)],
      ['200 emoji (400 UTF-16 units)', '😀'.repeat(200)],
    ])('accepts a title of %s and stores it intact', async (_, title) => {
      const note = await create({ title });
      expect(note.title).toBe(title);
      expect(((await call('GET', `/notes/${note.id}`)).json as Note).title).toBe(title);
    });

    it('accepts a JSON content type with a charset', async () => {
      const response = await call('POST', '/notes', jsonText('{"title":"charset"}', 'application/json; charset=utf-8'));
      expect(response.status).toBe(201);
    });

    it('accepts a body of exactly the size limit', async () => {
      const frame = '{"title":"big","body":""}';
      const body = 'x'.repeat(BODY_LIMIT - frame.length);
      const response = await call('POST', '/notes', jsonText(JSON.stringify({ title: 'big', body })));
      expect(response.status).toBe(201);
      expect((response.json as Note).body).toHaveLength(body.length);
    });
  });

  // Every rejected body, for create and update alike: status and the exact `error`.
  const invalidBodies: [string, Options, number, string][] = [
    ['a missing title', { json: { body: 'x' } }, 400, 'title is required'],
    ['an empty title', { json: { title: '' } }, 400, 'title must not be empty'],
    ['a null title', { json: { title: null } }, 400, 'title must be a string'],
    ['a numeric title', { json: { title: 123 } }, 400, 'title must be a string'],
    ['an array title', { json: { title: ['a'] } }, 400, 'title must be a string'],
    ['a title of 201 characters', { json: { title: 'a'.repeat(201) } }, 400, 'title must be at most 200 characters'],
    ['a title of 201 emoji', { json: { title: '😀'.repeat(201) } }, 400, 'title must be at most 200 characters'],
    ['a title with NUL', { json: { title: 'a\u0000b' } }, 400, 'title must not contain the NUL character'],
    // JSON text can escape half of a surrogate pair, which PostgreSQL would store as U+FFFD.
    ['a title holding a lone surrogate', jsonText('{"title":"\\ud83d"}'), 400, 'title must be well-formed Unicode'],
    ['a body holding a lone surrogate', jsonText('{"title":"t","body":"x\\udc00"}'), 400, 'body must be well-formed Unicode'],
    ['a numeric body', { json: { title: 't', body: 5 } }, 400, 'body must be a string'],
    ['a body with NUL', { json: { title: 't', body: '\u0000' } }, 400, 'body must not contain the NUL character'],
    ['two failing fields', { json: { body: false } }, 400, 'title is required; body must be a string'],
    ['an empty object', { json: {} }, 400, 'title is required'],
    ['a JSON array', { json: [{ title: 't' }] }, 400, 'Request body must be a JSON object, not an array'],
    ['a JSON string', { json: 'title' }, 400, 'Request body must be a JSON object, not a string'],
    ['a JSON number', { json: 42 }, 400, 'Request body must be a JSON object, not a number'],
    ['a JSON boolean', { json: true }, 400, 'Request body must be a JSON object, not a boolean'],
    ['JSON null', { json: null }, 400, 'Request body must be a JSON object, not null'],
    ['truncated JSON', jsonText('{"title": "x", "body": '), 400, 'Request body is not valid JSON: Expecting value (at character 23)'],
    ['JSON followed by garbage', jsonText('{"title":"x"} garbage'), 400, 'Request body is not valid JSON: Extra data (at character 14)'],
    [
      'JSON nested 65 levels deep',
      jsonText(`{"title":"x","body":${'['.repeat(64)}${']'.repeat(64)}}`),
      400,
      'Request body is not valid JSON: Nesting deeper than 64 levels (at character 83)',
    ],
    [
      'single-quoted JSON',
      jsonText("{'title': 'x'}"),
      400,
      'Request body is not valid JSON: Expecting property name enclosed in double quotes (at character 1)',
    ],
    ['an empty JSON body', jsonText(''), 400, 'Request body is required: send a JSON object with a "title"'],
    ['no body at all', {}, 400, 'Request body is required: send a JSON object with a "title"'],
    [
      'a text/plain body',
      jsonText('{"title":"x"}', 'text/plain'),
      415,
      'Request body must be sent with Content-Type: application/json (got text/plain)',
    ],
    [
      'a form-encoded body',
      jsonText('title=x', 'application/x-www-form-urlencoded'),
      415,
      'Request body must be sent with Content-Type: application/json (got application/x-www-form-urlencoded)',
    ],
    ['a JSON body without a content type', { body: '{"title":"x"}' }, 415, 'Request body must be sent with Content-Type: application/json (got none)'],
    ['a body over the size limit', { json: { title: 'big', body: 'x'.repeat(BODY_LIMIT) } }, 413, 'Request body too large'],
  ];

  describe('create: rejected bodies', () => {
    it.each(invalidBodies)('answers %s with its status and message, storing nothing', async (_, request, status, error) => {
      const before = await storedNotes();
      const response = await call('POST', '/notes', request);
      expect(response.status).toBe(status);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      expect(response.json).toEqual({ error });
      expect(await storedNotes()).toEqual(before);
      expect(service.logs.errors()).toEqual([]);
    });

    it('keeps serving after an oversized body', async () => {
      const response = await call('POST', '/notes', { json: { title: 'x', body: 'y'.repeat(BODY_LIMIT * 4) } });
      expect(response.status).toBe(413);
      expect((await call('GET', '/notes')).status).toBe(200);
      expect((await call('POST', '/notes', { json: { title: 'after' } })).status).toBe(201);
    });
  });

  // Path ids that cannot name a note: not a positive decimal integer within int4.
  const invalidIds = ['abc', '1.5', '-1', '0', '2147483648', '99999999999999999999', 'true', '1e3', '0x10', '%20', '%E0'];

  describe('show', () => {
    it('answers 200 with the note', async () => {
      const note = await create({ title: 'shown', body: 'text' });
      const response = await call('GET', `/notes/${note.id}`);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      expect(response.json).toEqual(note);
    });

    it.each(['2147483647', '424242'])('answers 404 for a missing id (%s)', async (id) => {
      const response = await call('GET', `/notes/${id}`);
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
    });

    it.each(invalidIds)('answers 404 for the path id %j', async (id) => {
      const response = await call('GET', `/notes/${id}`);
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
      expect(service.logs.errors()).toEqual([]);
    });
  });

  describe('update', () => {
    it('replaces title and body, keeping id and created_at', async () => {
      const note = await create({ title: 'before', body: 'old' });
      const response = await call('PUT', `/notes/${note.id}`, { json: { title: 'after', body: 'new' } });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      const updated = { ...note, title: 'after', body: 'new' };
      expect(response.json).toEqual(updated);
      expect((await call('GET', `/notes/${note.id}`)).json).toEqual(updated);
    });

    it.each([
      ['omitted', { title: 'only a title' }],
      ['null', { title: 'null body', body: null }],
    ])('empties the body when it is %s', async (_, input) => {
      const note = await create({ title: 'x', body: 'to be emptied' });
      const response = await call('PUT', `/notes/${note.id}`, { json: input });
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ ...note, title: input.title, body: '' });
    });

    it('ignores id, created_at and unknown fields in the body', async () => {
      const note = await create({ title: 'x' });
      const response = await call('PUT', `/notes/${note.id}`, {
        json: { id: note.id + 1000, created_at: '2000-01-01T00:00:00.000Z', title: 'y', colour: 'red' },
      });
      expect(response.json).toEqual({ ...note, title: 'y' });
    });

    it('accepts the unchanged values', async () => {
      const note = await create({ title: 'same', body: 'same' });
      const response = await call('PUT', `/notes/${note.id}`, { json: { title: 'same', body: 'same' } });
      expect(response.status).toBe(200);
      expect(response.json).toEqual(note);
    });

    it.each(invalidBodies)('answers %s with its status and message, changing nothing', async (_, request, status, error) => {
      const note = await create({ title: 'untouched', body: 'kept' });
      const response = await call('PUT', `/notes/${note.id}`, request);
      expect(response.status).toBe(status);
      expect(response.json).toEqual({ error });
      expect((await call('GET', `/notes/${note.id}`)).json).toEqual(note);
      expect(service.logs.errors()).toEqual([]);
    });

    it('looks the note up before reading the body: a missing note is 404 whatever the body', async () => {
      for (const [, request] of invalidBodies) {
        const response = await call('PUT', '/notes/2147483647', request);
        expect(response.status).toBe(404);
        expect(response.json).toEqual(NOT_FOUND);
      }
      const valid = await call('PUT', '/notes/2147483647', { json: { title: 'x' } });
      expect(valid.status).toBe(404);
      expect(valid.json).toEqual(NOT_FOUND);
    });

    it.each(invalidIds)('answers 404 for the path id %j', async (id) => {
      const response = await call('PUT', `/notes/${id}`, { json: { title: 'x' } });
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
    });

    it('answers 404 when the note is deleted between the lookup and the update', async () => {
      // A database of its own, to hold a transaction open on a connection of the test's own.
      const database = await serviceDatabase(notes8080);
      let own: Service | undefined;
      try {
        await database.migrate();
        own = await startTestService(notes8080, { db: database.connect(), deps });
        const note = await createOn(own, { title: 'doomed' });
        // The open transaction deletes the row first: the update blocks on its lock after the
        // lookup has seen the note, and finds it gone once the transaction commits.
        const response = await withClient(database.url, async (deleting) => {
          await deleting.query('BEGIN');
          try {
            await deleting.query(`DELETE FROM ${database.schema}.notes WHERE id = $1`, [note.id]);
            const update = own!.request('PUT', `/notes/${note.id}`, { json: { title: 'too late' } });
            await waitForBlockedUpdate(own!.db);
            await deleting.query('COMMIT');
            return await update;
          } catch (error) {
            await deleting.query('ROLLBACK');
            throw error;
          }
        });
        expect(response.status).toBe(404);
        expect(response.json).toEqual(NOT_FOUND);
        expect(own.logs.errors()).toEqual([]);
      } finally {
        await own?.close();
        await database.drop();
      }
    });
  });

  describe('delete', () => {
    it('answers 204 with no body, after which the note is gone', async () => {
      const note = await create({ title: 'to delete' });
      const response = await call('DELETE', `/notes/${note.id}`);
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect((await call('GET', `/notes/${note.id}`)).json).toEqual(NOT_FOUND);
      expect((await storedNotes()).map((stored) => stored.id)).not.toContain(note.id);
    });

    it('answers 404 for a note already deleted or never created', async () => {
      const note = await create({ title: 'deleted twice' });
      expect((await call('DELETE', `/notes/${note.id}`)).status).toBe(204);
      for (const id of [note.id, 2147483647]) {
        const response = await call('DELETE', `/notes/${id}`);
        expect(response.status).toBe(404);
        expect(response.json).toEqual(NOT_FOUND);
      }
    });

    it.each(invalidIds)('answers 404 for the path id %j', async (id) => {
      const before = await storedNotes();
      const response = await call('DELETE', `/notes/${id}`);
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
      expect(await storedNotes()).toEqual(before);
    });
  });

  describe('routing', () => {
    // Routing is strict: `/notes/` is not `/notes`.
    it.each(['/', '/note', '/notes/', '/notes/1/extra', '/api/notes'])('answers 404 {error} for the unknown path %s', async (path) => {
      const response = await call('GET', path);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(JSON_TYPE);
      expect(response.json).toEqual({ error: 'Not Found' });
    });

    it('serves nothing at /notes/, not even a create', async () => {
      const before = await storedNotes();
      const response = await call('POST', '/notes/', { json: { title: 'slash' } });
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ error: 'Not Found' });
      expect(await storedNotes()).toEqual(before);
    });

    it.each([
      ['PATCH', '/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['POST', '/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['OPTIONS', '/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['DELETE', '/notes', ['GET', 'HEAD', 'POST']],
      ['PUT', '/notes', ['GET', 'HEAD', 'POST']],
      ['OPTIONS', '/notes', ['GET', 'HEAD', 'POST']],
    ])('answers 405 {error} with an Allow header to %s %s', async (method, path, allowed) => {
      const response = await call(method, path, { json: { title: 'x' } });
      expect(response.status).toBe(405);
      expect(response.json).toEqual({ error: 'Method Not Allowed' });
      expect(String(response.headers.allow).split(/,\s*/).sort()).toEqual(allowed);
    });
  });

  it('gives 100 concurrent creates 100 distinct ids, all listed', async () => {
    const created = await Promise.all(Array.from({ length: 100 }, (_, i) => call('POST', '/notes', { json: { title: `concurrent ${i}` } })));
    expect(created.map((response) => response.status)).toEqual(Array(100).fill(201));
    const ids = created.map((response) => (response.json as Note).id);
    expect(new Set(ids).size).toBe(100);
    const listed = new Set((await storedNotes()).map((note) => note.id));
    expect(ids.every((id) => listed.has(id))).toBe(true);
  });

  it('logs one line per request and no error for client errors', async () => {
    await call('GET', '/notes/abc');
    await call('POST', '/notes', { json: {} });
    expect(service.logs.lines).toEqual([
      expect.objectContaining({ method: 'GET', path: '/notes/abc', status: 404 }),
      expect.objectContaining({ method: 'POST', path: '/notes', status: 400 }),
    ]);
  });
});

/** Resolves once an UPDATE of the service is waiting for a row lock. */
async function waitForBlockedUpdate(db: Database) {
  for (;;) {
    const { rows } = await db.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'update %notes%'`,
    );
    if (rows[0]!.waiting > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('notes8080 service when the store fails', () => {
  it('answers every operation with 500 {error} within the pool timeout, logging each failure once with its error', async () => {
    const timeoutMs = 1_000;
    const { db } = await unreachableDatabase(notes8080.database!.schema, timeoutMs);
    const service = await startTestService(notes8080, { db, deps });
    try {
      const operations: [string, string, Options?][] = [
        ['POST', '/notes', { json: { title: 'x' } }],
        ['GET', '/notes'],
        ['GET', '/notes/1'],
        ['PUT', '/notes/1', { json: { title: 'x' } }],
        ['DELETE', '/notes/1'],
      ];
      for (const [method, path, options] of operations) {
        service.logs.clear();
        const response = await service.request(method, path, options);
        expect(response.status, `${method} ${path}`).toBe(500);
        expect(response.json).toEqual({ error: 'database unavailable' });
        // A wait for a connection, then one for the statement: each bounded by the timeout.
        expect(response.ms, `${method} ${path}`).toBeLessThan(2 * timeoutMs + 1_000);
        expect(service.logs.errors()).toEqual([expect.objectContaining({ err: expect.objectContaining({ message: expect.any(String) }) })]);
      }
    } finally {
      await service.close();
      await db.close();
    }
  }, 20_000);

  it('cuts a streamed list short (never hangs) when the database fails mid-list, and logs it', async () => {
    const database = await serviceDatabase(notes8080);
    let service: Service | undefined;
    try {
      await database.migrate();
      const db = database.connect();
      service = await startTestService(notes8080, { db, deps });
      // About 13 MB of JSON: far more than the socket buffers hold while the client waits.
      await db.query(`INSERT INTO notes (title, body) SELECT 'note ' || i, repeat('x', 200) FROM generate_series(1, 50000) AS i`);
      // fetch rather than service.request: the answer must stay unread while the store fails,
      // and an answer cut short has no body to check against the contract.
      const response = await fetch(`${service.url}/notes`);
      expect(response.status).toBe(200);
      await db.query('ALTER TABLE notes RENAME TO notes_gone');
      await expect(response.text()).rejects.toThrow();
      expect(service.logs.errors()).toEqual([expect.objectContaining({ msg: 'answer cut short' })]);
    } finally {
      await service?.close();
      await database.drop();
    }
  }, 20_000);

  it('serves again by itself once the database is back', async () => {
    const database = await serviceDatabase(notes8080);
    const target = new URL(database.url);
    const proxy = await tcpProxy(Number(target.port), target.hostname);
    let service: Service | undefined;
    try {
      await database.migrate();
      const proxied = new URL(database.url);
      proxied.port = String(proxy.port);
      service = await startTestService(notes8080, { db: database.connect(proxied.toString()), deps });
      const note = await createOn(service, { title: 'before the outage' });

      await proxy.stop();
      const during = await service.request('GET', `/notes/${note.id}`);
      expect(during.status).toBe(500);
      expect(during.json).toEqual({ error: 'database unavailable' });

      await proxy.start();
      const after = await service.request('GET', `/notes/${note.id}`);
      expect(after.status).toBe(200);
      expect(after.json).toEqual(note);
    } finally {
      await service?.close();
      await proxy.stop();
      await database.drop();
    }
  }, 20_000);
});

/** A TCP relay to the database that can be cut (dropping every connection) and restored. */
async function tcpProxy(targetPort: number, targetHost: string) {
  const port = await freeLoopbackPort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server?.listening) return resolve();
      server.close(() => resolve());
    });
  await start();
  return { port, start, stop };
}
