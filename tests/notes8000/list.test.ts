import { describe, expect, test } from 'vitest';
import { notes8000 } from '../../server/services.js';
import { deps, TIMESTAMP, useNotes8000, type Note } from '../support/notes8000.js';
import { startTestService } from '../support/services.js';

const { service, call, createNote, noteCount } = useNotes8000();

describe('notes8000 GET /notes', () => {
  test('GET /notes on a fresh store answers []', async () => {
    // A service of its own: the suite's store holds the notes of the other tests.
    const fresh = await startTestService(notes8000, { deps });
    try {
      expect(await fresh.request('GET', '/notes')).toMatchObject({ status: 200, json: [] });
    } finally {
      await fresh.close();
    }
  });

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

  test('GET /notes sends a list over a read batch whole: every note, newest first', async () => {
    await service().db.query(
      `INSERT INTO notes (title, content)
        SELECT 'bulk ' || i, 'text' FROM generate_series(1, 2500) AS i`,
    );
    const stored = (
      await service().db.query<{ id: string }>('SELECT id FROM notes ORDER BY id DESC')
    ).rows.map((row) => Number(row.id));
    const answer = await call('GET', '/notes');
    expect(answer.status).toBe(200);
    const notes = answer.json as Note[];
    expect(notes.map((note) => note.id)).toEqual(stored);
    expect(notes.find((note) => note.title === 'bulk 1')).toMatchObject({
      content: 'text',
      updated_at: expect.stringMatching(TIMESTAMP),
    });
  });
});
