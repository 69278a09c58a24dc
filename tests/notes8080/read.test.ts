import { describe, expect, it } from 'vitest';
import { JSON_TYPE, NOT_FOUND, useNotes8080 } from '../support/notes8080.js';
import { invalidIds } from '../support/notes8080Invalid.js';

describe('notes8080 GET /notes/{id}', () => {
  const { service, call, create } = useNotes8080();

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
    expect(service().logs.errors()).toEqual([]);
  });
});
