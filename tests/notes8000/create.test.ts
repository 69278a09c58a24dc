import { describe, expect, test } from 'vitest';
import {
  BODY_LIMIT,
  raw,
  TIMESTAMP,
  useNotes8000,
  type Note,
  type Options,
} from '../support/notes8000.js';
import {
  jsonInvalid,
  missing,
  notAnObject,
  notAString,
  nulCharacter,
  tooLong,
  validationError,
} from '../support/pydanticErrors.js';

const { call, storedTimestamps, noteCount } = useNotes8000();

describe('notes8000 POST /notes', () => {
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
      json: {
        id: 999_999,
        title: 'client ids',
        content: 'x',
        created_at: '2000-01-01T00:00:00',
        updated_at: '2000-01-01T00:00:00',
      },
    });
    expect(answer.status).toBe(201);
    const note = answer.json as Note;
    expect(note.id).not.toBe(999_999);
    expect(note.created_at.startsWith('2000')).toBe(false);
    expect(note.updated_at).toBe(note.created_at);
  });

  test('ignores unknown fields', async () => {
    const answer = await call('POST', '/notes', {
      json: { title: 'extra', content: 'x', color: 'red' },
    });
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.json as Note)).toEqual([
      'id',
      'title',
      'content',
      'created_at',
      'updated_at',
    ]);
  });

  test('accepts application/json with a charset', async () => {
    const answer = await call(
      'POST',
      '/notes',
      raw('{"title":"charset","content":"x"}', 'application/json; charset=utf-8'),
    );
    expect(answer.status).toBe(201);
  });
});

describe(
  'notes8000 POST /notes: validation failures ' +
    'answer 422 in Pydantic v2 shape and store nothing',
  () => {
    const title101 = 'a'.repeat(101);
    test.each<[string, Options, object]>([
      [
        'missing title',
        raw('{"content":"x"}'),
        validationError(missing(['body', 'title'], { content: 'x' })),
      ],
      [
        'missing content',
        raw('{"title":"x"}'),
        validationError(missing(['body', 'content'], { title: 'x' })),
      ],
      [
        'empty object',
        raw('{}'),
        validationError(missing(['body', 'title'], {}), missing(['body', 'content'], {})),
      ],
      [
        'title too long (101 chars)',
        raw(`{"title": "${title101}", "content": "x"}`),
        validationError(tooLong('title', title101)),
      ],
      [
        'title of 101 emoji',
        raw(JSON.stringify({ title: '😀'.repeat(101), content: 'x' })),
        validationError(tooLong('title', '😀'.repeat(101))),
      ],
      [
        'title null',
        raw('{"title":null,"content":"x"}'),
        validationError(notAString('title', null)),
      ],
      [
        'title is a number',
        raw('{"title":123,"content":"x"}'),
        validationError(notAString('title', 123)),
      ],
      [
        'every failing field, in field order',
        raw('{"content":["x"],"title":5}'),
        validationError(notAString('title', 5), notAString('content', ['x'])),
      ],
      [
        'invalid JSON',
        raw('{"title": "x", "content": '),
        validationError(jsonInvalid(26, 'Expecting value')),
      ],
      [
        'JSON followed by garbage',
        raw('{"title":"x","content":"y"} trailing'),
        validationError(jsonInvalid(28, 'Extra data')),
      ],
      [
        'JSON nested 1,000 levels deep',
        raw(`{"title":${'['.repeat(1_000)}${']'.repeat(1_000)},"content":"x"}`),
        validationError(jsonInvalid(72, 'Nesting deeper than 64 levels')),
      ],
      ['empty body', raw(''), validationError(missing(['body'], null))],
      ['JSON null body', raw('null'), validationError(missing(['body'], null))],
      [
        'JSON array body',
        raw('[{"title":"x","content":"y"}]'),
        validationError(notAnObject([{ title: 'x', content: 'y' }])),
      ],
      ['JSON string body', raw('"a note"'), validationError(notAnObject('a note'))],
      ['JSON number body', raw('42'), validationError(notAnObject(42))],
      [
        'text/plain body',
        raw('{"title":"x","content":"y"}', 'text/plain'),
        validationError(notAnObject('{"title":"x","content":"y"}')),
      ],
      [
        'form-encoded body',
        raw('title=x&content=y', 'application/x-www-form-urlencoded'),
        validationError(notAnObject('title=x&content=y')),
      ],
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
        'a title both too long and holding U+0000 (one ' +
          'entry, the length, as Pydantic checks it first)',
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
      const answer = await call('POST', '/notes', {
        json: { title: 'big', content: 'x'.repeat(BODY_LIMIT) },
      });
      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({ detail: 'Request body too large' });
      expect((await call('GET', '/health')).status).toBe(200);
      expect(await noteCount()).toBe(before);
    });
  },
);

describe('notes8000 POST /notes: concurrency', () => {
  test('100 concurrent creates land with 100 distinct ids', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call('POST', '/notes', { json: { title: `concurrent ${i}`, content: 'x' } }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(100).fill(201));
    const ids = new Set(answers.map((answer) => (answer.json as Note).id));
    expect(ids.size).toBe(100);
    const listed = new Set(((await call('GET', '/notes')).json as Note[]).map((note) => note.id));
    for (const id of ids) expect(listed.has(id)).toBe(true);
  });
});
