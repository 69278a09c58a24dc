import { notes8000 } from '../../server/services.js';
import { NOTES_SERVICES, useNotesService } from './notesServices.js';

export interface Note {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

/** ISO 8601 without offset, six fraction digits unless zero (Python's isoformat). */
export const TIMESTAMP = NOTES_SERVICES[1].timestamp;
export const NOT_FOUND = { detail: 'ノートが見つかりません' };

/** The 8000 notes service (notes-service-8000.md), as FastAPI answers: see useNotesService. */
export function useNotes8000() {
  const notes = useNotesService(notes8000);

  const createNote = (title = 'a title', content = 'some content') =>
    notes.create<Note>({ title, content });

  /** The note's timestamps as the store holds them, in the text form the API uses. */
  async function storedTimestamps(id: number) {
    // Python's isoformat drops a zero fraction.
    const shown = (column: string) =>
      `regexp_replace(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
        '\\.000000$', '') AS ${column}`;
    const sql = `SELECT ${shown('created_at')}, ${shown('updated_at')} FROM notes WHERE id = $1`;
    const { rows } = await notes.service().db.query(sql, [id]);
    return rows[0] as { created_at: string; updated_at: string } | undefined;
  }

  return { ...notes, createNote, storedTimestamps };
}
