import type { NoteRow } from './store.js';

/** A note as the API shows it; `created_at` in UTC with milliseconds, e.g. `2026-11-22T10:11:49.123Z`. */
export function presentNote(row: NoteRow) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    created_at: row.created_at.toISOString(),
  };
}
