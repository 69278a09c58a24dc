import { describe, expect, it } from 'vitest';
import { withClient } from '../../harness/postgres.js';
import { notes8080 } from '../../server/services.js';
import type { Database } from '../../server/db/pool.js';
import {
  createOn,
  deps,
  JSON_TYPE,
  NOT_FOUND,
  useNotes8080,
  type Service,
} from '../support/notes8080.js';
import { invalidBodies, invalidIds } from '../support/notes8080Invalid.js';
import { serviceDatabase } from '../support/serviceDatabase.js';
import { startTestService } from '../support/services.js';

describe('notes8080 PUT /notes/{id}', () => {
  const { service, call, create } = useNotes8080();

  it('replaces title and body, keeping id and created_at', async () => {
    const note = await create({ title: 'before', body: 'old' });
    const response = await call('PUT', `/notes/${note.id}`, {
      json: { title: 'after', body: 'new' },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(JSON_TYPE);
    const updated = { ...note, title: 'after', body: 'new' };
    expect(response.json).toEqual(updated);
    expect((await call('GET', `/notes/${note.id}`)).json).toEqual(updated);
  });

  it.each([
    ['omitted', { title: 'only a title' }],
    ['null', { title: 'null body', body: null }],
  ])('empties the body when it is %s', async (_, input) => {
    const note = await create({ title: 'x', body: 'to be emptied' });
    const response = await call('PUT', `/notes/${note.id}`, { json: input });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ ...note, title: input.title, body: '' });
  });

  it('ignores id, created_at and unknown fields in the body', async () => {
    const note = await create({ title: 'x' });
    const response = await call('PUT', `/notes/${note.id}`, {
      json: {
        id: note.id + 1000,
        created_at: '2000-01-01T00:00:00.000Z',
        title: 'y',
        colour: 'red',
      },
    });
    expect(response.json).toEqual({ ...note, title: 'y' });
  });

  it('accepts the unchanged values', async () => {
    const note = await create({ title: 'same', body: 'same' });
    const response = await call('PUT', `/notes/${note.id}`, {
      json: { title: 'same', body: 'same' },
    });
    expect(response.status).toBe(200);
    expect(response.json).toEqual(note);
  });

  it.each(invalidBodies)(
    'answers %s with its status and message, changing nothing',
    async (_, request, status, error) => {
      const note = await create({ title: 'untouched', body: 'kept' });
      const response = await call('PUT', `/notes/${note.id}`, request);
      expect(response.status).toBe(status);
      expect(response.json).toEqual({ error });
      expect((await call('GET', `/notes/${note.id}`)).json).toEqual(note);
      expect(service().logs.errors()).toEqual([]);
    },
  );

  it('looks the note up before reading the body: a missing note is 404 whatever sent', async () => {
    for (const [, request] of invalidBodies) {
      const response = await call('PUT', '/notes/2147483647', request);
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
    }
    const valid = await call('PUT', '/notes/2147483647', { json: { title: 'x' } });
    expect(valid.status).toBe(404);
    expect(valid.json).toEqual(NOT_FOUND);
  });

  it.each(invalidIds)('answers 404 for the path id %j', async (id) => {
    const response = await call('PUT', `/notes/${id}`, { json: { title: 'x' } });
    expect(response.status).toBe(404);
    expect(response.json).toEqual(NOT_FOUND);
  });

  it('answers 404 when the note is deleted while its update waits for the row', async () => {
    // A database of its own, to hold a transaction open on a connection of the test's own.
    const database = await serviceDatabase(notes8080);
    let own: Service | undefined;
    try {
      await database.migrate();
      own = await startTestService(notes8080, { db: database.connect(), deps });
      const note = await createOn(own, { title: 'doomed' });
      // The open transaction deletes the row first: the update blocks on its lock after the
      // lookup has seen the note, and finds it gone once the transaction commits.
      const response = await withClient(database.url, async (deleting) => {
        await deleting.query('BEGIN');
        try {
          await deleting.query(`DELETE FROM ${database.schema}.notes WHERE id = $1`, [note.id]);
          const update = own!.request('PUT', `/notes/${note.id}`, { json: { title: 'too late' } });
          await waitForBlockedUpdate(own!.db);
          await deleting.query('COMMIT');
          return await update;
        } catch (error) {
          await deleting.query('ROLLBACK');
          throw error;
        }
      });
      expect(response.status).toBe(404);
      expect(response.json).toEqual(NOT_FOUND);
      expect(own.logs.errors()).toEqual([]);
    } finally {
      await own?.close();
      await database.drop();
    }
  });
});

/** Resolves once an UPDATE of the service is waiting for a row lock. */
async function waitForBlockedUpdate(db: Database) {
  for (;;) {
    const { rows } = await db.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'
          AND query ILIKE '%update notes%'`,
    );
    if (rows[0]!.waiting > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
