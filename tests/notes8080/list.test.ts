import { describe, expect, it } from 'vitest';
import { notes8080 } from '../../server/services.js';
import { deps, JSON_TYPE, useNotes8080, type Note } from '../support/notes8080.js';
import { startTestService } from '../support/services.js';

describe('notes8080 GET /notes', () => {
  const { service, call, create, storedNotes } = useNotes8080();

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
    const created = [
      await create({ title: 'a' }),
      await create({ title: 'b' }),
      await create({ title: 'c' }),
    ];
    const notes = await storedNotes();
    const ids = notes.map((note) => note.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(notes.slice(0, 3)).toEqual([...created].reverse());
  });

  it('sends a list longer than one read batch whole: every note once, newest first', async () => {
    await service().db.query(
      `INSERT INTO notes (title, body)
        SELECT 'bulk ' || i, 'text' FROM generate_series(1, 2500) AS i`,
    );
    const stored = (
      await service().db.query<{ id: string }>('SELECT id FROM notes ORDER BY id DESC')
    ).rows.map((row) => Number(row.id));
    const response = await call('GET', '/notes');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(JSON_TYPE);
    const notes = response.json as Note[];
    expect(notes.map((note) => note.id)).toEqual(stored);
    expect(notes.find((note) => note.title === 'bulk 1')).toMatchObject({
      body: 'text',
      created_at: expect.stringMatching(/Z$/),
    });
  });
});
