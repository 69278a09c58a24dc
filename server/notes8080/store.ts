import { batchesById, type Database } from '../shared/database.js';

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

// The columns are named, as a table completed at start-up may hold others.
const COLUMNS = 'id, title, body, created_at';
const SQL = {
  list: `SELECT ${COLUMNS} FROM notes WHERE id < $1::bigint ORDER BY id DESC LIMIT $2`,
  find: `SELECT ${COLUMNS} FROM notes WHERE id = $1`,
  insert: `INSERT INTO notes (title, body) VALUES ($1, $2) RETURNING ${COLUMNS}`,
  replace: `UPDATE notes SET title = $2, body = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
  delete: 'DELETE FROM notes WHERE id = $1',
};

export function noteStore(db: Database) {
  return {
    /** Every note, newest first, a batch at a time. */
    list: () => batchesById<NoteRow>(db, SQL.list, LIST_BATCH),

    async find(id: number): Promise<NoteRow | undefined> {
      return (await db.query<NoteRow>(SQL.find, [id])).rows[0];
    },

    async insert({ title, body }: NoteFields): Promise<NoteRow> {
      return (await db.query<NoteRow>(SQL.insert, [title, body])).rows[0]!;
    },

    /** The replaced note, or undefined when it no longer exists (deleted meanwhile). */
    async replace(id: number, { title, body }: NoteFields): Promise<NoteRow | undefined> {
      return (await db.query<NoteRow>(SQL.replace, [id, title, body])).rows[0];
    },

    /** Whether a note was deleted. */
    async remove(id: number): Promise<boolean> {
      return ((await db.query(SQL.delete, [id])).rowCount ?? 0) > 0;
    },
  };
}
