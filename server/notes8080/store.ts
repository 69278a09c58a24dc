import { batchesById, query, type Database } from '../shared/database.js';

/** A row of the `notes` table. */
export interface NoteRow {
  id: number;
  title: string;
  body: string;
  created_at: Date;
}

export interface NoteFields {
  title: string;
  body: string;
}

/** Notes per statement when the list is read (each batch is also one chunk of the response). */
const LIST_BATCH = 250;

// Fixed statements, sent as they are (see `query`); the columns are named, as a table completed
// at start-up may hold others.
const COLUMNS = 'id, title, body, created_at';
const SQL = {
  list: `SELECT ${COLUMNS} FROM notes WHERE id < $1::bigint ORDER BY id DESC LIMIT $2`,
  find: `SELECT ${COLUMNS} FROM notes WHERE id = $1`,
  insert: `INSERT INTO notes (title, body) VALUES ($1, $2) RETURNING ${COLUMNS}`,
  replace: `UPDATE notes SET title = $2, body = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
  delete: 'DELETE FROM notes WHERE id = $1',
};

/** Every note, newest first, a batch at a time. */
export function listNotes(db: Database): AsyncGenerator<NoteRow[]> {
  return batchesById<NoteRow>(db, SQL.list, LIST_BATCH);
}

export async function findNote(db: Database, id: number): Promise<NoteRow | undefined> {
  return (await query<NoteRow>(db, SQL.find, [id])).rows[0];
}

export async function insertNote(db: Database, { title, body }: NoteFields): Promise<NoteRow> {
  return (await query<NoteRow>(db, SQL.insert, [title, body])).rows[0]!;
}

/** The replaced note, or undefined when it no longer exists (deleted meanwhile). */
export async function replaceNote(db: Database, id: number, { title, body }: NoteFields): Promise<NoteRow | undefined> {
  return (await query<NoteRow>(db, SQL.replace, [id, title, body])).rows[0];
}

/** Whether a note was deleted. */
export async function deleteNote(db: Database, id: number): Promise<boolean> {
  return ((await query(db, SQL.delete, [id])).rowCount ?? 0) > 0;
}
