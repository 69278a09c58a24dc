import { notes8000 } from '../../server/services.js';
import { NOTES_SERVICES, useNotesService } from './notesServices.js';

export interface Note {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

/**
 * ISO 8601 without offset, with six fraction digits unless the fraction is zero (Python's
 * isoformat).
 */
export const TIMESTAMP = NOTES_SERVICES[1].timestamp;
export const NOT_FOUND = { detail: 'ノートが見つかりません' };

/**
 * The 8000 notes service (notes-service-8000.md) of a test file, answering as FastAPI does: see
 * useNotesService.
 */
export function useNotes8000() {
  const notes = useNotesService(notes8000);

  const createNote = (title = 'a title', content = 'some content') =>
    notes.create<Note>({ title, content });

  /** The note's timestamps as the store holds them, in the text form the API uses. */
  async function storedTimestamps(id: number) {
    const format = `'YYYY-MM-DD"T"HH24:MI:SS.US'`;
    const { rows } = await notes.service().db.query<{ created_at: string; updated_at: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', ${format}) AS created_at,
              to_char(updated_at AT TIME ZONE 'UTC', ${format}) AS updated_at
       FROM notes WHERE id = $1`,
      [id],
    );
    // Python's isoformat drops a zero fraction.
    return rows.map((row) => ({
      created_at: row.created_at.replace(/\.000000$/, ''),
      updated_at: row.updated_at.replace(/\.000000$/, ''),
    }))[0];
  }

  return { ...notes, createNote, storedTimestamps };
}
