import { describe, expect, test } from 'vitest';
import { NOT_FOUND, TIMESTAMP, useNotes8000, type Note } from '../support/notes8000.js';
import { BODY_LIMIT, JSON_TYPE, raw, statusAndBody } from '../support/notesServices.js';
import * as pydantic from '../support/pydanticErrors.js';

const { validationError, intParsing } = pydantic;
const { service, call, act, createNote, storedTimestamps, count } = useNotes8000();
const FIELDS = ['id', 'title', 'content', 'created_at', 'updated_at'];
const read = async (id: number | string) => (await call('GET', `/notes/${id}`)).json as Note;

describe('notes8000 POST /notes', () => {
  test("answers 201 with five fields, the store's timestamps; ignores the client's", async () => {
    const [id, time] = [999_999, '2000-01-01T00:00:00'];
    const json = { id, title: 'first', content: 'hello', created_at: time, updated_at: time };
    const answer = await call('POST', '/notes', { json: { ...json, color: 'red' } });
    expect(answer.status).toBe(201);
    const note = answer.json as Note;
    expect(Object.keys(note)).toEqual(FIELDS);
    expect(note).toMatchObject({ title: 'first', content: 'hello' });
    expect(Number.isInteger(note.id) && note.id !== id).toBe(true);
    expect(note.created_at).toMatch(TIMESTAMP);
    expect(note.updated_at).toBe(note.created_at);
    // The store's own value, microseconds and all (no rounding through a JS Date).
    expect(note.created_at).toBe((await storedTimestamps(note.id))?.created_at);
  });

  test.each([
    ['an empty content', 'second', ''],
    ['a title of 100 ASCII characters', 'a'.repeat(100), 'x'],
    ['a title of 100 Japanese characters (300 bytes)', 'あ'.repeat(100), 'x'],
    ['a title of 100 emoji (200 UTF-16 units)', '😀'.repeat(100), 'x'],
    ['application/json with a charset', 'charset', 'x', 'application/json; charset=utf-8'],
  ])('accepts %s', async (_, title, content, type = 'application/json') => {
    const answer = await call('POST', '/notes', raw(JSON.stringify({ title, content }), type));
    expect(answer).toMatchObject({ status: 201, json: { title, content } });
  });

  test.each(pydantic.invalidCreates)(
    'answers 422 to %s, storing nothing',
    async (_, request, detail) => {
      const before = await count();
      const answer = await call('POST', '/notes', request);
      expect([answer.status, answer.json]).toEqual([422, validationError(...detail)]);
      expect(answer.headers['content-type']).toMatch(JSON_TYPE);
      expect(await count()).toBe(before);
    },
  );

  test('a body over the limit answers 413 {detail} and the service keeps serving', async () => {
    const before = await count();
    const json = { title: 'big', content: 'x'.repeat(BODY_LIMIT) };
    const answer = await call('POST', '/notes', { json });
    expect(statusAndBody(answer)).toEqual([413, { detail: 'Request body too large' }]);
    expect((await call('GET', '/health')).status).toBe(200);
    expect(await count()).toBe(before);
  });
});

describe('notes8000 PUT /notes/{id}', () => {
  /** A note whose timestamps lie in the past, so that a refresh by the store is visible. */
  async function agedNote(): Promise<Note> {
    const { id } = await createNote('first', 'hello');
    const past = `created_at = '2026-01-01 00:00:00.5+00', updated_at = '2026-01-01 00:00:00.5+00'`;
    await service().db.query(`UPDATE notes SET ${past} WHERE id = $1`, [id]);
    return read(id);
  }

  test.each([
    ['the title only: the content kept', { title: 'first (edited)' }],
    ['an empty content, which counts as sent', { content: '' }],
    ['both fields', { title: 'new', content: 'body' }],
  ])('replaces what is sent, %s; refreshes updated_at alone', async (_, json) => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json });
    expect(answer.status).toBe(200);
    const updated = answer.json as Note;
    expect(updated).toEqual({ ...note, ...json, updated_at: expect.stringMatching(TIMESTAMP) });
    expect(updated.updated_at > note.updated_at).toBe(true);
    expect(updated.updated_at).toBe((await storedTimestamps(note.id))?.updated_at);
    expect(await read(note.id)).toEqual(updated);
  });

  test.each([
    ['nulls', { title: null, content: null }],
    ['{}', {}],
    ['the values already stored', { title: 'first', content: 'hello' }],
  ])('with %s nothing changes, updated_at included', async (_, json) => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json });
    expect([answer.status, answer.json]).toEqual([200, note]);
    expect(await read(note.id)).toEqual(note);
  });

  test.each(pydantic.invalidUpdates)(
    'answers 422 to %s, changing nothing',
    async (_, request, detail) => {
      const note = await agedNote();
      const answer = await call('PUT', `/notes/${note.id}`, request);
      expect([answer.status, answer.json]).toEqual([422, validationError(...detail)]);
      expect(await read(note.id)).toEqual(note);
    },
  );

  test('checks the body before looking the note up: 422, not 404', async () => {
    const invalid = await call('PUT', '/notes/999999', raw('{bad'));
    const why = 'Expecting property name enclosed in double quotes';
    const badJson = validationError(pydantic.jsonInvalid(1, why));
    expect(statusAndBody(invalid)).toEqual([422, badJson]);
    const long = await call('PUT', '/notes/999999', { json: { title: 'a'.repeat(101) } });
    const tooLong = validationError(pydantic.tooLong('title', 'a'.repeat(101)));
    expect(statusAndBody(long)).toEqual([422, tooLong]);
    // A non-integer id and a bad body are reported together, path first.
    const both = await call('PUT', '/notes/abc', { json: { title: 5 } });
    expect(both.json).toEqual(validationError(intParsing('abc'), pydantic.notAString('title', 5)));
  });
});

describe('notes8000 GET and DELETE /notes/{id}', () => {
  test('reads a note; deletes it with the message; then it is 404 on every method', async () => {
    const note = await createNote('shown', 'body');
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 200, json: note });
    const deleted = await call('DELETE', `/notes/${note.id}`);
    expect([deleted.status, deleted.json]).toEqual([200, { message: 'ノートを削除しました' }]);
    for (const method of ['GET', 'PUT', 'DELETE'])
      expect(await act(method, note.id), method).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  const big = '1'.repeat(4301);
  test.each([
    ...['abc', '1.5', '1e3', '%20'].map((id) => [id, 422, id, intParsing(decodeURIComponent(id))]),
    ['of over 4300 digits (as Pydantic refuses it)', 422, big, pydantic.intParsingSize(big)],
    ...'999999 -1 0 9007199254740992 9223372036854775808 99999999999999999999'
      .split(' ')
      .map((id) => [id, 404, id]),
  ] as [string, number, string, object?][])(
    'the id %s answers %i on GET, PUT and DELETE',
    async (_, status, id, entry) => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const answer = await act(method, id);
        const body = entry ? validationError(entry) : NOT_FOUND;
        expect([answer.status, answer.json], method).toEqual([status, body]);
      }
    },
  );

  test.each([
    ['zero decimals', (id: number) => `${id}.0`],
    ['a plus sign', (id: number) => `+${id}`],
    ['surrounding spaces', (id: number) => `%20${id}%20`],
  ])('an id Pydantic reads as an integer (%s) finds the note', async (_, form) => {
    const note = await createNote('lax id');
    expect(await call('GET', `/notes/${form(note.id)}`)).toMatchObject({ status: 200, json: note });
  });

  test('shows timestamps in UTC without an offset, as Python isoformat does', async () => {
    const { id } = await createNote();
    const shown = async (stored: string) => {
      await service().db.query('UPDATE notes SET created_at = $2 WHERE id = $1', [id, stored]);
      return (await read(id)).created_at;
    };
    // Whatever offset they were stored with; trailing zeros of microseconds kept, a zero
    // fraction dropped.
    expect(await shown('2026-11-22 19:11:49.123456+09')).toBe('2026-11-22T10:11:49.123456');
    expect(await shown('2026-11-22 10:11:49.1+00')).toBe('2026-11-22T10:11:49.100000');
    expect(await shown('2026-11-22 10:11:49+00')).toBe('2026-11-22T10:11:49');
  });
});

describe('notes8000 routing', () => {
  test('GET /health answers {status: "healthy"}', async () => {
    const answer = await call('GET', '/health');
    const healthy = [200, { status: 'healthy' }, expect.stringMatching(JSON_TYPE)];
    expect([answer.status, answer.json, answer.headers['content-type']]).toEqual(healthy);
  });

  test.each([
    ['PATCH', '/notes/1', 405, 'DELETE, GET, HEAD, PUT'],
    ['DELETE', '/notes', 405, 'GET, HEAD, POST'],
    ['POST', '/health', 405, 'GET, HEAD'],
    ['OPTIONS', '/notes', 200, 'GET, HEAD, POST'],
  ])(
    '%s %s answers %i, the methods of the path in Allow',
    async (method, path, status, allowed) => {
      const answer = await call(method, path, method === 'PATCH' ? { json: { title: 'x' } } : {});
      expect(answer.status).toBe(status);
      if (status === 405) expect(answer.json).toEqual({ detail: 'Method Not Allowed' });
      expect(String(answer.headers.allow).split(', ').sort().join(', ')).toBe(allowed);
    },
  );

  test('HEAD answers as GET does, without body, on paths with and without parameters', async () => {
    const note = await createNote();
    for (const path of ['/health', '/notes', `/notes/${note.id}`]) {
      const [{ status, body, headers }, get] = [await call('HEAD', path), await call('GET', path)];
      const type = get.headers['content-type'];
      expect([status, body.length, headers['content-type']], path).toEqual([200, 0, type]);
    }
    expect((await call('HEAD', '/notes/999999')).status).toBe(404);
  });

  test('matches paths exactly (letter case, a slash); others are 404 {detail}', async () => {
    for (const path of ['/HEALTH', '/Notes', '/health/'])
      expect((await call('GET', path)).status, path).not.toBe(200);
    for (const path of ['/nope', '/notes/1/extra', '/'])
      expect(await call('GET', path)).toMatchObject({ status: 404, json: { detail: 'Not Found' } });
  });

  test.each([
    ['/notes/', '/notes', {}],
    ['/notes/5/?x=1', '/notes/5?x=1', {}],
    // Never built from the Host header.
    ['/notes/?x=1', '/notes?x=1', { host: 'attacker.example' }],
  ])(
    'GET %s redirects (307) to %s as FastAPI does, relatively',
    async (path, location, headers) => {
      const answer = await call('GET', path, { headers });
      expect([answer.status, answer.headers.location, answer.text]).toEqual([307, location, '']);
    },
  );
});
