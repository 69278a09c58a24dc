import { describe, expect, test } from 'vitest';
import { NOT_FOUND, useNotes8000, type Note } from '../support/notes8000.js';
import { intParsing, validationError } from '../support/pydanticErrors.js';

const { service, call, createNote } = useNotes8000();

describe('notes8000 GET /notes/{id}', () => {
  test('GET /notes/{id} answers the note', async () => {
    const note = await createNote('shown', 'body');
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 200, json: note });
  });

  test('an unknown id answers 404 with the spec message', async () => {
    expect(await call('GET', '/notes/999999')).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test.each(['abc', '1.5', '1e3', '%20'])(
    'a non-integer id (%s) answers 422 int_parsing',
    async (id) => {
      const answer = await call('GET', `/notes/${id}`);
      expect(answer.status).toBe(422);
      expect(answer.json).toEqual(validationError(intParsing(decodeURIComponent(id))));
    },
  );

  test('an id of over 4300 digits answers 422 int_parsing_size, as Pydantic does', async () => {
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

  test.each(['-1', '0', '9007199254740992', '9223372036854775808', '99999999999999999999'])(
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
});

describe('notes8000 GET /notes/{id}: timestamps', () => {
  async function setStored(id: number, timestamp: string) {
    await service().db.query('UPDATE notes SET created_at = $2 WHERE id = $1', [id, timestamp]);
  }

  test('are shown in UTC without an offset, whatever offset they were stored with', async () => {
    const note = await createNote();
    await setStored(note.id, '2026-11-22 19:11:49.123456+09');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe(
      '2026-11-22T10:11:49.123456',
    );
  });

  test('keep trailing zeros of microseconds, drop a zero fraction (Python isoformat)', async () => {
    const note = await createNote();
    await setStored(note.id, '2026-11-22 10:11:49.1+00');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe(
      '2026-11-22T10:11:49.100000',
    );
    await setStored(note.id, '2026-11-22 10:11:49+00');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).created_at).toBe(
      '2026-11-22T10:11:49',
    );
  });
});
