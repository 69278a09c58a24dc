import { describe, expect, it } from 'vitest';
import { NOT_FOUND, TIMESTAMP, useNotes8080, type Note } from '../support/notes8080.js';
import { invalidBodies, invalidIds } from '../support/notes8080Invalid.js';
import { BODY_LIMIT, JSON_TYPE, raw, statusAndBody } from '../support/notesServices.js';

const { service, call, act, create, storedNotes } = useNotes8080();
const read = async (id: number) => (await call('GET', `/notes/${id}`)).json as Note;

describe('notes8080 POST /notes', () => {
  it('answers 201 with the stored note, as a later read shows it; ids increase', async () => {
    const answer = await call('POST', '/notes', { json: { title: 'Groceries', body: 'milk' } });
    const json = expect.stringMatching(JSON_TYPE);
    expect([answer.status, answer.headers['content-type']]).toEqual([201, json]);
    const note = answer.json as Note;
    const created_at = expect.stringMatching(TIMESTAMP);
    expect(note).toEqual({ id: expect.any(Number), title: 'Groceries', body: 'milk', created_at });
    expect(Math.abs(Date.parse(note.created_at) - Date.now())).toBeLessThan(60_000);
    expect(await read(note.id)).toEqual(note);
    expect((await storedNotes())[0]).toEqual(note);
    expect((await create({ title: 'second' })).id).toBeGreaterThan(note.id);
  });

  it.each([
    ['an empty body when it is omitted', { title: 'no body' }],
    ['an empty body when it is null', { title: 'null body', body: null }],
    ['an empty body when it is empty', { title: 'empty body', body: '' }],
    ['a title of 200 ASCII characters', { title: 'a'.repeat(200) }],
    ['a title of 200 Japanese characters', { title: 'あ'.repeat(200) }],
    ['a title of 200 emoji (400 UTF-16 units)', { title: '😀'.repeat(200) }],
  ])('stores %s intact', async (_, input) => {
    const note = await create(input);
    expect(note).toMatchObject({ title: input.title, body: '' });
    expect(await read(note.id)).toEqual(note);
  });

  it('accepts a JSON type with a charset, and a body of exactly the size limit', async () => {
    const charset = raw('{"title":"charset"}', 'application/json; charset=utf-8');
    expect((await call('POST', '/notes', charset)).status).toBe(201);
    const body = 'x'.repeat(BODY_LIMIT - '{"title":"big","body":""}'.length);
    const answer = await call('POST', '/notes', raw(JSON.stringify({ title: 'big', body })));
    expect(answer.status).toBe(201);
    expect((answer.json as Note).body).toHaveLength(body.length);
  });

  it('ignores id, created_at and unknown fields in the body, on create and update', async () => {
    const [id, created_at] = [999_999, '2000-01-01T00:00:00.000Z'];
    const note = await create({ id, created_at, title: 't', colour: 'red' });
    expect(note.id).not.toBe(id);
    expect(note.created_at).not.toBe(created_at);
    expect(Object.keys(note).sort()).toEqual(['body', 'created_at', 'id', 'title']);
    expect((await call('GET', `/notes/${id}`)).status).toBe(404);
    const json = { id: note.id + 1000, created_at, title: 'y', colour: 'red' };
    const updated = await call('PUT', `/notes/${note.id}`, { json });
    expect(updated.json).toEqual({ ...note, title: 'y' });
  });
});

describe('notes8080 PUT /notes/{id}', () => {
  it.each<[string, { title: string; body?: string | null }]>([
    ['title and body', { title: 'after', body: 'new' }],
    ['the title, an omitted body emptied', { title: 'only a title' }],
    ['the title, a null body emptied', { title: 'null body', body: null }],
  ])('replaces %s, keeping id and created_at; the same again changes nothing', async (_, json) => {
    const note = await create({ title: 'before', body: 'old' });
    const updated = { ...note, title: json.title, body: json.body ?? '' };
    for (let time = 0; time < 2; time++) {
      const answer = await call('PUT', `/notes/${note.id}`, { json });
      expect(statusAndBody(answer)).toEqual([200, updated]);
      expect(answer.headers['content-type']).toMatch(JSON_TYPE);
    }
    expect(await read(note.id)).toEqual(updated);
  });

  it('answers 404 when the note is deleted while its update waits for the row', async () => {
    const note = await create({ title: 'doomed' });
    const { db } = service();
    const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'
      AND datname = current_database() AND query ILIKE '%update notes%'`;
    // A transaction deletes the row first: the update blocks on its lock after the lookup has
    // seen the note, and finds it gone once the transaction commits.
    const [update] = await db.transaction(async (query) => {
      await query('DELETE FROM notes WHERE id = $1', [note.id]);
      const update = act('PUT', note.id);
      const blocked = async () => (await db.query(waiting)).rows[0].n as number;
      await expect.poll(blocked, { timeout: 10_000 }).toBeGreaterThan(0);
      return [update];
    });
    expect(statusAndBody(await update)).toEqual([404, NOT_FOUND]);
    expect(service().logs.errors()).toEqual([]);
  });
});

describe('notes8080 rejected bodies', () => {
  it.each(invalidBodies)(
    'answers %s on create and update with its message, changing nothing; a missing note 404',
    async (_, request, error, status = 400) => {
      const note = await create({ title: 'untouched', body: 'kept' });
      const before = await storedNotes();
      for (const path of ['/notes', `/notes/${note.id}`]) {
        const answer = await call(path === '/notes' ? 'POST' : 'PUT', path, request);
        expect([answer.status, answer.json], path).toEqual([status, { error }]);
        expect(answer.headers['content-type']).toMatch(JSON_TYPE);
      }
      expect(await storedNotes()).toEqual(before);
      // The note is looked up before the body is read.
      const missing = await call('PUT', '/notes/2147483647', request);
      expect([missing.status, missing.json]).toEqual([404, NOT_FOUND]);
      expect(service().logs.errors()).toEqual([]);
    },
  );

  it('keeps serving after an oversized body', async () => {
    const json = { title: 'x', body: 'y'.repeat(BODY_LIMIT * 4) };
    expect((await call('POST', '/notes', { json })).status).toBe(413);
    expect((await call('GET', '/notes')).status).toBe(200);
    expect((await call('POST', '/notes', { json: { title: 'after' } })).status).toBe(201);
  });
});

describe('notes8080 GET and DELETE /notes/{id}', () => {
  it('reads a note, deletes it with 204 and no body; then 404 on every method', async () => {
    const note = await create({ title: 'shown', body: 'text' });
    const shown = await call('GET', `/notes/${note.id}`);
    const json = expect.stringMatching(JSON_TYPE);
    expect([shown.status, shown.json, shown.headers['content-type']]).toEqual([200, note, json]);
    const deleted = await call('DELETE', `/notes/${note.id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    expect((await storedNotes()).map((stored) => stored.id)).not.toContain(note.id);
    for (const id of [note.id, 2147483647, 424242])
      for (const method of ['GET', 'PUT', 'DELETE'])
        expect(statusAndBody(await act(method, id)), `${method} ${id}`).toEqual([404, NOT_FOUND]);
  });

  it.each(invalidIds)('answers 404 to GET, PUT and DELETE of the path id %j', async (id) => {
    const before = await storedNotes();
    for (const method of ['GET', 'PUT', 'DELETE'])
      expect(statusAndBody(await act(method, id)), method).toEqual([404, NOT_FOUND]);
    expect(await storedNotes()).toEqual(before);
    expect(service().logs.errors()).toEqual([]);
  });
});

describe('notes8080 requests', () => {
  // Routing is strict: `/notes/` is not `/notes`, not even for a create.
  it.each([
    ...['/', '/note', '/notes/', '/notes/1/extra', '/api/notes'].map((path) => ['GET', path]),
    ['POST', '/notes/'],
  ])('answers 404 {error} to %s %s, storing nothing', async (method, path) => {
    const before = await storedNotes();
    const body = method === 'POST' ? { json: { title: 'slash' } } : {};
    const answer = await call(method!, path!, body);
    expect(statusAndBody(answer)).toEqual([404, { error: 'Not Found' }]);
    expect(answer.headers['content-type']).toMatch(JSON_TYPE);
    expect(await storedNotes()).toEqual(before);
  });

  const [ONE, ALL] = ['DELETE, GET, HEAD, PUT', 'GET, HEAD, POST'];
  it.each([
    ['PATCH', '/notes/1', 405, ONE],
    ['POST', '/notes/1', 405, ONE],
    ['DELETE', '/notes', 405, ALL],
    ['PUT', '/notes', 405, ALL],
    ['OPTIONS', '/notes/1', 200, ONE],
    ['OPTIONS', '/notes', 200, ALL],
  ])(
    'answers %s %s with %i, the methods of the path in Allow',
    async (method, path, status, allowed) => {
      const answer = await call(method, path, method === 'OPTIONS' ? {} : { json: { title: 'x' } });
      expect(answer.status).toBe(status);
      if (status === 405) expect(answer.json).toEqual({ error: 'Method Not Allowed' });
      else expect(answer.body.length).toBe(0);
      expect(String(answer.headers.allow).split(/,\s*/).sort().join(', ')).toBe(allowed);
    },
  );

  it('logs one line per request, no error for client errors, of at most 400 bytes', async () => {
    await call('GET', '/notes/abc');
    await call('POST', '/notes', { json: {} });
    expect(service().logs.lines).toEqual([
      expect.objectContaining({ method: 'GET', path: '/notes/abc', status: 404 }),
      expect.objectContaining({ method: 'POST', path: '/notes', status: 400 }),
    ]);
    // Whatever the path: it is cut, and marked.
    const path = `/notes/${'x'.repeat(8_000)}`;
    expect((await call('GET', path)).status).toBe(404);
    const line = service().logs.lines.at(-1);
    expect(line).toMatchObject({ method: 'GET', path: `${path.slice(0, 160)}…`, status: 404 });
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(400);
  });
});
