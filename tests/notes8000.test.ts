import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Reply, Request } from '../harness/http.js';
import type { StartedService } from '../harness/service.js';
import { notes8000 } from '../server/notes8000/index.js';
import type { NotesDeps } from '../server/shared/service.js';
import { loadConfig } from '../server/shared/config.js';
import { notesColumns, serviceDatabase, unreachableDatabase, type ServiceDatabase } from './support/serviceDatabase.js';
import { startTestService } from './support/services.js';

// The 8000 notes service (notes-service-8000.md), answering as FastAPI does, over HTTP. Every
// answer is also checked against the service's own OpenAPI document (service.request).

const SCHEMA = notes8000.database!.schema;
const BODY_LIMIT = loadConfig({}).notes.bodyLimitBytes;
const deps = { config: loadConfig({}).notes };
const JSON_TYPE = 'application/json';

/** ISO 8601 without offset, with six fraction digits unless the fraction is zero (Python's isoformat). */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/;
const NOT_FOUND = { detail: 'ノートが見つかりません' };

interface Note {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

type Service = StartedService<NotesDeps>;
type Options = Omit<Request, 'method' | 'path'>;

/** Text sent as it is, with `contentType` (none when null). */
const raw = (body: string, contentType: string | null = JSON_TYPE): Options => ({
  body,
  ...(contentType !== null && { headers: { 'content-type': contentType } }),
});

let service: Service;

beforeAll(async () => {
  service = await startTestService(notes8000, { deps });
});

afterAll(async () => {
  await service?.close();
});

const call = (method: string, path: string, options?: Options) => service.request(method, path, options);

async function createNote(title = 'a title', content = 'some content', on: Service = service): Promise<Note> {
  const answer = await on.request('POST', '/notes', { json: { title, content } });
  expect(answer.status).toBe(201);
  return answer.json as Note;
}

/** The note as the store holds it, timestamps in the same text form the API uses. */
async function storedTimestamps(id: number): Promise<{ created_at: string; updated_at: string } | undefined> {
  const format = `'YYYY-MM-DD"T"HH24:MI:SS.US'`;
  const { rows } = await service.db.query<{ created_at: string; updated_at: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', ${format}) AS created_at,
            to_char(updated_at AT TIME ZONE 'UTC', ${format}) AS updated_at
     FROM notes WHERE id = $1`,
    [id],
  );
  return rows[0];
}

async function noteCount(): Promise<number> {
  const { rows } = await service.db.query<{ count: number }>('SELECT count(*)::int AS count FROM notes');
  return rows[0]!.count;
}

const validationError = (...detail: unknown[]) => ({ detail });

// Pydantic's entries, word for word as the FastAPI peer answered them.
const missing = (loc: (string | number)[], input: unknown) => ({ type: 'missing', loc, msg: 'Field required', input });
const notAString = (field: string, input: unknown) => ({
  type: 'string_type',
  loc: ['body', field],
  msg: 'Input should be a valid string',
  input,
});
const tooLong = (field: string, input: string) => ({
  type: 'string_too_long',
  loc: ['body', field],
  msg: 'String should have at most 100 characters',
  input,
  ctx: { max_length: 100 },
});
const notAnObject = (input: unknown) => ({
  type: 'model_attributes_type',
  loc: ['body'],
  msg: 'Input should be a valid dictionary or object to extract fields from',
  input,
});
const jsonInvalid = (position: number, error: string) => ({
  type: 'json_invalid',
  loc: ['body', position],
  msg: 'JSON decode error',
  input: {},
  ctx: { error },
});
const intParsing = (input: string) => ({
  type: 'int_parsing',
  loc: ['path', 'note_id'],
  msg: 'Input should be a valid integer, unable to parse string as an integer',
  input,
});
const nulCharacter = (field: string, input: string) => ({
  type: 'value_error',
  loc: ['body', field],
  msg: 'Value error, String should not contain the NUL character (U+0000)',
  input,
  ctx: { error: 'String should not contain the NUL character (U+0000)' },
});

describe('health and the empty index', () => {
  test('GET /health answers {status: "healthy"}', async () => {
    const answer = await call('GET', '/health');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json).toEqual({ status: 'healthy' });
  });

  test('GET /notes on a fresh store answers []', async () => {
    // A service of its own: the suite's store holds the notes of the other tests.
    const fresh = await startTestService(notes8000, { deps });
    try {
      expect(await fresh.request('GET', '/notes')).toMatchObject({ status: 200, json: [] });
    } finally {
      await fresh.close();
    }
  });
});

describe('create', () => {
  test('answers 201 with exactly the five fields, timestamps set by the store', async () => {
    const answer = await call('POST', '/notes', { json: { title: 'first', content: 'hello' } });
    expect(answer.status).toBe(201);
    const note = answer.json as Note;
    expect(Object.keys(note)).toEqual(['id', 'title', 'content', 'created_at', 'updated_at']);
    expect(note).toMatchObject({ title: 'first', content: 'hello' });
    expect(Number.isInteger(note.id)).toBe(true);
    expect(note.created_at).toMatch(TIMESTAMP);
    expect(note.updated_at).toBe(note.created_at);
    // The store's own value, microseconds and all (no rounding through a JS Date).
    const stored = await storedTimestamps(note.id);
    expect(note.created_at).toBe(stored?.created_at.replace(/\.000000$/, ''));
  });

  test('accepts an empty content', async () => {
    const answer = await call('POST', '/notes', { json: { title: 'second', content: '' } });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({ title: 'second', content: '' });
  });

  test.each([
    ['100 ASCII characters', 'a'.repeat(100)],
    ['100 Japanese characters (300 bytes)', 'あ'.repeat(100)],
    ['100 emoji (200 UTF-16 units)', '😀'.repeat(100)],
  ])('accepts a title of %s', async (_, title) => {
    const answer = await call('POST', '/notes', { json: { title, content: 'x' } });
    expect(answer.status).toBe(201);
    expect((answer.json as Note).title).toBe(title);
  });

  test('ignores id, created_at and updated_at sent by the client', async () => {
    const answer = await call('POST', '/notes', {
      json: { id: 999_999, title: 'client ids', content: 'x', created_at: '2000-01-01T00:00:00', updated_at: '2000-01-01T00:00:00' },
    });
    expect(answer.status).toBe(201);
    const note = answer.json as Note;
    expect(note.id).not.toBe(999_999);
    expect(note.created_at.startsWith('2000')).toBe(false);
    expect(note.updated_at).toBe(note.created_at);
  });

  test('ignores unknown fields', async () => {
    const answer = await call('POST', '/notes', { json: { title: 'extra', content: 'x', color: 'red' } });
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.json as Note)).toEqual(['id', 'title', 'content', 'created_at', 'updated_at']);
  });

  test('accepts application/json with a charset', async () => {
    const answer = await call('POST', '/notes', raw('{"title":"charset","content":"x"}', 'application/json; charset=utf-8'));
    expect(answer.status).toBe(201);
  });
});

describe('create: validation failures answer 422 in Pydantic v2 shape and store nothing', () => {
  const title101 = 'a'.repeat(101);
  test.each<[string, Options, object]>([
    ['missing title', raw('{"content":"x"}'), validationError(missing(['body', 'title'], { content: 'x' }))],
    ['missing content', raw('{"title":"x"}'), validationError(missing(['body', 'content'], { title: 'x' }))],
    ['empty object', raw('{}'), validationError(missing(['body', 'title'], {}), missing(['body', 'content'], {}))],
    ['title too long (101 chars)', raw(`{"title": "${title101}", "content": "x"}`), validationError(tooLong('title', title101))],
    ['title of 101 emoji', raw(JSON.stringify({ title: '😀'.repeat(101), content: 'x' })), validationError(tooLong('title', '😀'.repeat(101)))],
    ['title null', raw('{"title":null,"content":"x"}'), validationError(notAString('title', null))],
    ['title is a number', raw('{"title":123,"content":"x"}'), validationError(notAString('title', 123))],
    ['every failing field, in field order', raw('{"content":["x"],"title":5}'), validationError(notAString('title', 5), notAString('content', ['x']))],
    ['invalid JSON', raw('{"title": "x", "content": '), validationError(jsonInvalid(26, 'Expecting value'))],
    ['JSON followed by garbage', raw('{"title":"x","content":"y"} trailing'), validationError(jsonInvalid(28, 'Extra data'))],
    [
      'JSON nested 1,000 levels deep',
      raw(`{"title":${'['.repeat(1_000)}${']'.repeat(1_000)},"content":"x"}`),
      validationError(jsonInvalid(72, 'Nesting deeper than 64 levels')),
    ],
    ['empty body', raw(''), validationError(missing(['body'], null))],
    ['JSON null body', raw('null'), validationError(missing(['body'], null))],
    ['JSON array body', raw('[{"title":"x","content":"y"}]'), validationError(notAnObject([{ title: 'x', content: 'y' }]))],
    ['JSON string body', raw('"a note"'), validationError(notAnObject('a note'))],
    ['JSON number body', raw('42'), validationError(notAnObject(42))],
    ['text/plain body', raw('{"title":"x","content":"y"}', 'text/plain'), validationError(notAnObject('{"title":"x","content":"y"}'))],
    ['form-encoded body', raw('title=x&content=y', 'application/x-www-form-urlencoded'), validationError(notAnObject('title=x&content=y'))],
    [
      'no Content-Type header, JSON body',
      raw('{"title":"no ctype","content":"x"}', null),
      validationError(notAnObject('{"title":"no ctype","content":"x"}')),
    ],
    [
      'U+0000 in the title and the content',
      raw('{"title":"a\\u0000b","content":"\\u0000"}'),
      validationError(nulCharacter('title', 'a\u0000b'), nulCharacter('content', '\u0000')),
    ],
    [
      'half of a surrogate pair, which would be stored as U+FFFD',
      raw('{"title":"\\ud83d","content":"x"}'),
      validationError({
        type: 'value_error',
        loc: ['body', 'title'],
        msg: 'Value error, String should not contain unpaired surrogates',
        input: '\ud83d',
        ctx: { error: 'String should not contain unpaired surrogates' },
      }),
    ],
    [
      'a title both too long and holding U+0000 (one entry, the length, as Pydantic checks it first)',
      raw(JSON.stringify({ title: `${title101}\u0000`, content: 'x' })),
      validationError(tooLong('title', `${title101}\u0000`)),
    ],
  ])('%s', async (_, request, expected) => {
    const before = await noteCount();
    const answer = await call('POST', '/notes', request);
    expect(answer.status).toBe(422);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json).toEqual(expected);
    expect(await noteCount()).toBe(before);
  });

  test('a body over the limit answers 413 {detail} and the service keeps serving', async () => {
    const before = await noteCount();
    const answer = await call('POST', '/notes', { json: { title: 'big', content: 'x'.repeat(BODY_LIMIT) } });
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({ detail: 'Request body too large' });
    expect((await call('GET', '/health')).status).toBe(200);
    expect(await noteCount()).toBe(before);
  });
});

describe('index and show', () => {
  test('GET /notes lists every note, newest id first', async () => {
    const created = [await createNote('one'), await createNote('two'), await createNote('three')];
    const answer = await call('GET', '/notes');
    expect(answer.status).toBe(200);
    const notes = answer.json as Note[];
    const ids = notes.map((note) => note.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(notes.length).toBe(await noteCount());
    expect(notes.slice(0, 3)).toEqual(created.reverse());
  });

  test('GET /notes sends a list longer than one read batch whole: every note once, newest first', async () => {
    await service.db.query(`INSERT INTO notes (title, content) SELECT 'bulk ' || i, 'text' FROM generate_series(1, 2500) AS i`);
    const stored = (await service.db.query<{ id: number }>('SELECT id FROM notes ORDER BY id DESC')).rows.map((row) => row.id);
    const answer = await call('GET', '/notes');
    expect(answer.status).toBe(200);
    const notes = answer.json as Note[];
    expect(notes.map((note) => note.id)).toEqual(stored);
    expect(notes.find((note) => note.title === 'bulk 1')).toMatchObject({ content: 'text', updated_at: expect.stringMatching(TIMESTAMP) });
  });

  test('GET /notes/{id} answers the note', async () => {
    const note = await createNote('shown', 'body');
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 200, json: note });
  });

  test('an unknown id answers 404 with the spec message', async () => {
    expect(await call('GET', '/notes/999999')).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test.each(['abc', '1.5', '1e3', '%20'])('a non-integer id (%s) answers 422 int_parsing', async (id) => {
    const answer = await call('GET', `/notes/${id}`);
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual(validationError(intParsing(decodeURIComponent(id))));
  });

  test('an id of more than 4300 digits answers 422 int_parsing_size, as Pydantic does', async () => {
    const id = '1'.repeat(4301);
    expect(await call('GET', `/notes/${id}`)).toMatchObject({
      status: 422,
      json: validationError({
        type: 'int_parsing_size',
        loc: ['path', 'note_id'],
        msg: 'Unable to parse input string as an integer, exceeded maximum size',
        input: id,
      }),
    });
  });

  test.each(['-1', '0', '2147483648', '9223372036854775808', '99999999999999999999'])(
    'an integer that no note can have (%s) answers 404',
    async (id) => {
      expect(await call('GET', `/notes/${id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
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

  test('GET /notes/ redirects (307) to /notes, as FastAPI does, with a relative Location', async () => {
    const answer = await call('GET', '/notes/');
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes');
    expect(answer.text).toBe('');
  });

  test('a trailing slash after a note id redirects too, keeping the query', async () => {
    const answer = await call('GET', '/notes/5/?x=1');
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes/5?x=1');
  });

  test('the redirect is never built from the Host header', async () => {
    const answer = await call('GET', '/notes/?x=1', { headers: { host: 'attacker.example' } });
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes?x=1');
  });
});

describe('timestamps', () => {
  async function setStored(id: number, timestamp: string) {
    await service.db.query('UPDATE notes SET created_at = $2 WHERE id = $1', [id, timestamp]);
  }

  test('are shown in UTC without an offset, whatever offset they were stored with', async () => {
    const note = await createNote();
    await setStored(note.id, '2026-11-22 19:11:49.123456+09');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe('2026-11-22T10:11:49.123456');
  });

  test('keep trailing zeros of the microseconds, and drop a zero fraction (Python isoformat)', async () => {
    const note = await createNote();
    await setStored(note.id, '2026-11-22 10:11:49.1+00');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe('2026-11-22T10:11:49.100000');
    await setStored(note.id, '2026-11-22 10:11:49+00');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe('2026-11-22T10:11:49');
  });
});

describe('update (partial)', () => {
  /** A note whose timestamps lie in the past, so that a refresh by the store is visible. */
  async function agedNote(title = 'first', content = 'hello'): Promise<Note> {
    const note = await createNote(title, content);
    await service.db.query(`UPDATE notes SET created_at = '2026-01-01 00:00:00.5+00', updated_at = '2026-01-01 00:00:00.5+00' WHERE id = $1`, [note.id]);
    return (await call('GET', `/notes/${note.id}`)).json as Note;
  }

  test('title only: the title is replaced, the content kept, updated_at refreshed by the store', async () => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json: { title: 'first (edited)' } });
    expect(answer.status).toBe(200);
    const updated = answer.json as Note;
    expect(updated).toMatchObject({ id: note.id, title: 'first (edited)', content: 'hello', created_at: note.created_at });
    expect(updated.updated_at).toMatch(TIMESTAMP);
    expect(updated.updated_at > note.updated_at).toBe(true);
    expect(updated.updated_at).toBe((await storedTimestamps(note.id))?.updated_at.replace(/\.000000$/, ''));
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ json: updated });
  });

  test('an empty string counts as sent and replaces the content', async () => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json: { content: '' } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ title: 'first', content: '' });
    expect((answer.json as Note).updated_at > note.updated_at).toBe(true);
  });

  test('both fields at once', async () => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json: { title: 'new', content: 'body' } });
    expect(answer.json).toMatchObject({ id: note.id, title: 'new', content: 'body', created_at: note.created_at });
  });

  test.each([
    ['nulls', { title: null, content: null }],
    ['{}', {}],
    ['the values already stored', { title: 'first', content: 'hello' }],
  ])('with %s nothing changes, updated_at included', async (_, json) => {
    const note = await agedNote();
    const answer = await call('PUT', `/notes/${note.id}`, { json });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(note);
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ json: note });
  });

  test('an unknown id answers 404', async () => {
    expect(await call('PUT', '/notes/999999', { json: { title: 'x' } })).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test.each(['-1', '0', '2147483648', '99999999999999999999'])('an integer no note can have (%s) answers 404', async (id) => {
    expect(await call('PUT', `/notes/${id}`, { json: { title: 'x' } })).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test('an unknown id with invalid JSON answers 422: the body is validated before the lookup', async () => {
    const answer = await call('PUT', '/notes/999999', raw('{bad'));
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual(validationError(jsonInvalid(1, 'Expecting property name enclosed in double quotes')));
  });

  test('an unknown id with a too-long title answers 422, not 404', async () => {
    const answer = await call('PUT', '/notes/999999', { json: { title: 'a'.repeat(101) } });
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual(validationError(tooLong('title', 'a'.repeat(101))));
  });

  describe('failures answer 422 and change nothing', () => {
    const title101 = 'a'.repeat(101);
    test.each<[string, Options, object]>([
      ['invalid JSON', raw('{bad'), validationError(jsonInvalid(1, 'Expecting property name enclosed in double quotes'))],
      ['no body', raw(''), validationError(missing(['body'], null))],
      ['title is a number', raw('{"title":5}'), validationError(notAString('title', 5))],
      ['content is an object', raw('{"content":{"a":1}}'), validationError(notAString('content', { a: 1 }))],
      // FastAPI answers 500 here (NoteUpdate has no limit, the column refuses): the rule is create's.
      ['title of 101 chars', raw(`{"title": "${title101}"}`), validationError(tooLong('title', title101))],
      ['JSON array body', raw('[]'), validationError(notAnObject([]))],
      ['text/plain body', raw('{"title":"x"}', 'text/plain'), validationError(notAnObject('{"title":"x"}'))],
      ['U+0000 in the content', raw('{"content":"\\u0000"}'), validationError(nulCharacter('content', '\u0000'))],
    ])('%s', async (_, request, expected) => {
      const note = await agedNote();
      const answer = await call('PUT', `/notes/${note.id}`, request);
      expect(answer.status).toBe(422);
      expect(answer.json).toEqual(expected);
      expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 200, json: note });
    });
  });

  test('a non-integer id answers 422 int_parsing', async () => {
    const answer = await call('PUT', '/notes/abc', { json: { title: 'x' } });
    expect(answer).toMatchObject({ status: 422, json: validationError(intParsing('abc')) });
  });

  test('a non-integer id and a bad body are reported together, path first', async () => {
    const answer = await call('PUT', '/notes/abc', { json: { title: 5 } });
    expect(answer.json).toEqual(validationError(intParsing('abc'), notAString('title', 5)));
  });
});

describe('delete', () => {
  test('answers 200 with the message, then 404; the note is gone', async () => {
    const note = await createNote('to delete');
    expect(await call('DELETE', `/notes/${note.id}`)).toMatchObject({ status: 200, json: { message: 'ノートを削除しました' } });
    expect(await call('DELETE', `/notes/${note.id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test('a non-integer id answers 422 int_parsing', async () => {
    expect(await call('DELETE', '/notes/abc')).toMatchObject({ status: 422, json: validationError(intParsing('abc')) });
  });

  test.each(['-1', '0', '2147483648', '99999999999999999999'])('an integer no note can have (%s) answers 404', async (id) => {
    expect(await call('DELETE', `/notes/${id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
  });
});

describe('routing', () => {
  const allowOf = (answer: Reply) => String(answer.headers.allow).split(', ').sort();

  test('a known path with another method answers 405 with every method of the path in Allow', async () => {
    const onNote = await call('PATCH', '/notes/1', { json: { title: 'x' } });
    expect(onNote).toMatchObject({ status: 405, json: { detail: 'Method Not Allowed' } });
    expect(allowOf(onNote)).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);

    const onCollection = await call('DELETE', '/notes');
    expect(onCollection).toMatchObject({ status: 405, json: { detail: 'Method Not Allowed' } });
    expect(allowOf(onCollection)).toEqual(['GET', 'HEAD', 'POST']);

    const onHealth = await call('POST', '/health');
    expect(onHealth.status).toBe(405);
    expect(allowOf(onHealth)).toEqual(['GET', 'HEAD']);

    const options = await call('OPTIONS', '/notes');
    expect(options).toMatchObject({ status: 405, json: { detail: 'Method Not Allowed' } });
    expect(allowOf(options)).toEqual(['GET', 'HEAD', 'POST']);
  });

  test('HEAD answers as GET does, without the body, on paths with and without parameters', async () => {
    const note = await createNote();
    for (const path of ['/health', '/notes', `/notes/${note.id}`]) {
      const [head, get] = [await call('HEAD', path), await call('GET', path)];
      expect(head.status, path).toBe(200);
      expect(head.body.length, path).toBe(0);
      expect(head.headers['content-type'], path).toBe(get.headers['content-type']);
    }
    expect((await call('HEAD', '/notes/999999')).status).toBe(404);
  });

  test('paths are matched exactly: letter case and a slash count', async () => {
    for (const path of ['/HEALTH', '/Notes', '/health/']) expect((await call('GET', path)).status, path).not.toBe(200);
  });

  test('an unknown path answers 404 {detail: "Not Found"}', async () => {
    for (const path of ['/nope', '/notes/1/extra', '/']) {
      expect(await call('GET', path)).toMatchObject({ status: 404, json: { detail: 'Not Found' } });
    }
  });
});

describe('concurrency', () => {
  test('100 concurrent creates land with 100 distinct ids', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call('POST', '/notes', { json: { title: `concurrent ${i}`, content: 'x' } })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(100).fill(201));
    const ids = new Set(answers.map((answer) => (answer.json as Note).id));
    expect(ids.size).toBe(100);
    const listed = new Set(((await call('GET', '/notes')).json as Note[]).map((note) => note.id));
    for (const id of ids) expect(listed.has(id)).toBe(true);
  });
});

describe('store failure', () => {
  test('a database that refuses connections gives 500 {detail} within the pool timeout, logged once; /health still answers', async () => {
    const timeoutMs = 1_000;
    const { db, port } = await unreachableDatabase(SCHEMA, timeoutMs);
    const broken = await startTestService(notes8000, { db, deps });
    try {
      const list = await broken.request('GET', '/notes');
      expect(list).toMatchObject({ status: 500, json: { detail: 'database unavailable' } });
      const create = await broken.request('POST', '/notes', { json: { title: 'x', content: 'y' } });
      expect(create).toMatchObject({ status: 500, json: { detail: 'database unavailable' } });
      expect(create.text).not.toContain(String(port));
      // A wait for a connection, then one for the statement: each bounded by the timeout.
      for (const answer of [list, create]) expect(answer.ms).toBeLessThan(2 * timeoutMs + 1_000);

      expect(await broken.request('GET', '/health')).toMatchObject({ status: 200, json: { status: 'healthy' } });
      // Input is still validated without the store.
      expect((await broken.request('POST', '/notes', { json: {} })).status).toBe(422);

      expect(broken.logs.errors()).toHaveLength(2);
    } finally {
      await broken.close();
      await db.close();
    }
  });
});

describe('migration at start-up', () => {
  async function withFreshDatabase(work: (database: ServiceDatabase) => Promise<void>) {
    const database = await serviceDatabase(notes8000);
    try {
      await work(database);
    } finally {
      await database.drop();
    }
  }

  /** The service on `database`'s pool, for `work`, closed afterwards. */
  async function withService(database: ServiceDatabase, work: (service: Service) => Promise<void>) {
    const started = await startTestService(notes8000, { db: database.connect(), deps });
    try {
      await work(started);
    } finally {
      await started.close();
    }
  }

  const NOW = expect.stringMatching(/^(now\(\)|CURRENT_TIMESTAMP)$/);

  test('creates the notes table in its own schema on an empty database', async () => {
    await withFreshDatabase(async (database) => {
      await database.migrate();
      expect(await notesColumns(database.connect(), SCHEMA)).toMatchObject([
        { column_name: 'id', data_type: 'integer', is_nullable: 'NO', column_default: expect.stringContaining('nextval') },
        { column_name: 'title', data_type: 'character varying', character_maximum_length: 100, is_nullable: 'NO' },
        { column_name: 'content', data_type: 'text', is_nullable: 'NO' },
        { column_name: 'created_at', data_type: 'timestamp with time zone', is_nullable: 'NO', column_default: NOW, datetime_precision: 6 },
        { column_name: 'updated_at', data_type: 'timestamp with time zone', is_nullable: 'NO', column_default: NOW, datetime_precision: 6 },
      ]);
      await withService(database, async (fresh) => {
        expect((await fresh.request('POST', '/notes', { json: { title: 't', content: 'c' } })).status).toBe(201);
      });
    });
  });

  test('running twice changes nothing and keeps the notes', async () => {
    await withFreshDatabase(async (database) => {
      const db = database.connect();
      await database.migrate();
      await db.query(`INSERT INTO notes (title, content) VALUES ('kept', 'across start-ups')`);
      const before = await notesColumns(db, SCHEMA);
      await database.migrate();
      expect(await notesColumns(db, SCHEMA)).toEqual(before);
      expect((await db.query('SELECT title, content FROM notes')).rows).toEqual([{ title: 'kept', content: 'across start-ups' }]);
    });
  });

  test('keeps a notes table that already exists, with its rows, and refreshes updated_at on it', async () => {
    await withFreshDatabase(async (database) => {
      const db = database.connect();
      await db.query(`CREATE SCHEMA ${SCHEMA}`);
      await db.query(`CREATE TABLE ${SCHEMA}.notes (
        id serial PRIMARY KEY, title varchar(100) NOT NULL, content text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())`);
      await db.query(`INSERT INTO ${SCHEMA}.notes (title, content, updated_at) VALUES ('old', 'row', '2020-01-01')`);
      await database.migrate();
      await withService(database, async (started) => {
        const updated = await started.request('PUT', '/notes/1', { json: { title: 'new' } });
        expect(updated.json).toMatchObject({ id: 1, title: 'new', content: 'row' });
        expect((updated.json as Note).updated_at.startsWith('2020')).toBe(false);
      });
    });
  });
});
