import type pg from 'pg';
import { NOTE_TEXT, type NotesService } from './notesServices.js';

/**
 * Test data written straight into a service's table (the timestamps come from the columns'
 * defaults, as for a note created through the API).
 */

/** Empties the table and fills it with `count` notes; their ids, ascending. */
export async function resetNotes(pool: pg.Pool, service: NotesService, count: number): Promise<number[]> {
  await pool.query('TRUNCATE notes RESTART IDENTITY');
  return addNotes(pool, service, count);
}

/** Adds `count` notes; their ids, ascending. */
export async function addNotes(pool: pg.Pool, service: NotesService, count: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO notes (title, ${service.textField})
     SELECT 'Seeded note ' || i, $1 FROM generate_series(1, $2::int) AS i
     RETURNING id`,
    [NOTE_TEXT, count],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

/** Ids handed out in turn, over and over. */
export function cycle(ids: number[]): () => number {
  let next = 0;
  return () => ids[next++ % ids.length]!;
}

/** Ids handed out once each (for deletes); counts the requests that found none left. */
export function once(ids: number[]): { next(): number; shortBy(): number } {
  let next = 0;
  return {
    next: () => ids[Math.min(next++, ids.length - 1)]!,
    shortBy: () => Math.max(0, next - ids.length),
  };
}
