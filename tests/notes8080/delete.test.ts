import { describe, expect, it } from 'vitest';
import { NOT_FOUND, useNotes8080 } from '../support/notes8080.js';
import { invalidIds } from '../support/notes8080Invalid.js';

describe('notes8080 DELETE /notes/{id}', () => {
  const { call, create, storedNotes } = useNotes8080();

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
