import type { NoteRow } from './store.js';

/** A note as the API shows it: exactly these five fields. */
export interface NoteJson {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

export function presentNote(row: NoteRow): NoteJson {
  return {
    id: row.id,
    title: row.title,
    content: row.content,
    created_at: pythonIsoformat(row.created_at),
    updated_at: pythonIsoformat(row.updated_at),
  };
}

/** Python's `datetime.isoformat()` leaves out the fraction when it is exactly zero. */
function pythonIsoformat(timestamp: string): string {
  return timestamp.replace(/\.000000$/, '');
}
