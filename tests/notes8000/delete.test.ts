import { describe, expect, test } from 'vitest';
import { NOT_FOUND, useNotes8000 } from '../support/notes8000.js';
import { intParsing, validationError } from '../support/pydanticErrors.js';

const { call, createNote } = useNotes8000();

describe('notes8000 DELETE /notes/{id}', () => {
  test('answers 200 with the message, then 404; the note is gone', async () => {
    const note = await createNote('to delete');
    expect(await call('DELETE', `/notes/${note.id}`)).toMatchObject({
      status: 200,
      json: { message: 'ノートを削除しました' },
    });
    expect(await call('DELETE', `/notes/${note.id}`)).toMatchObject({
      status: 404,
      json: NOT_FOUND,
    });
    expect(await call('GET', `/notes/${note.id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  test('a non-integer id answers 422 int_parsing', async () => {
    expect(await call('DELETE', '/notes/abc')).toMatchObject({
      status: 422,
      json: validationError(intParsing('abc')),
    });
  });

  test.each(['-1', '0', '9007199254740992', '99999999999999999999'])(
    'an integer no note can have (%s) answers 404',
    async (id) => {
      expect(await call('DELETE', `/notes/${id}`)).toMatchObject({ status: 404, json: NOT_FOUND });
    },
  );
});
