import { batchesById, batchStatement, type Database } from '../shared/database.js';
import { recordCreated, type Recorded } from '../shared/idempotency.js';
import { inTime } from '../shared/writeFence.js';

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

// The columns are named, as a table completed at start-up may hold others.
const COLUMNS = 'id, title, body, created_at';
const SQL = {
  list: batchStatement('notes', COLUMNS, 'octet_length(title) + octet_length(body)'),
  find: `SELECT ${COLUMNS} FROM notes WHERE id = $1`,
  insert: `INSERT INTO notes (title, body) SELECT $1, $2 WHERE ${inTime(3)} RETURNING ${COLUMNS}`,
  insertRecorded: recordCreated(`INSERT INTO notes (title, body) SELECT $3, $4 WHERE ${inTime(5)} RETURNING ${COLUMNS}`),
  replace: `UPDATE notes SET title = $2, body = $3 WHERE id = $1 AND ${inTime(4)} RETURNING ${COLUMNS}`,
  delete: `DELETE FROM notes WHERE id = $1 AND ${inTime(2)}`,
};

export function noteStore(db: Database) {
  return {
    /** Every note, newest first, a batch at a time. */
    list: () => batchesById<NoteRow>(db, SQL.list),

    async find(id: number): Promise<NoteRow | undefined> {
      return (await db.query<NoteRow>(SQL.find, [id])).rows[0];
    },

    async insert({ title, body }: NoteFields): Promise<NoteRow> {
      return (await db.write<NoteRow>(SQL.insert, [title, body])).rows[0]!;
    },

    /** The insert of `fields`, recorded under an idempotency key (see createOnce). */
    recorded({ title, body }: NoteFields): Recorded<NoteRow> {
      return {
        create: async (key, fingerprint) => (await db.write<NoteRow>(SQL.insertRecorded, [key, fingerprint, title, body])).rows[0]!,
        replay: (recorded) => {
          const row = recorded as Omit<NoteRow, 'created_at'> & { created_at: string };
          return { ...row, created_at: new Date(row.created_at) };
        },
      };
    },

    /** The replaced note, or undefined when it no longer exists (deleted meanwhile). */
    async replace(id: number, { title, body }: NoteFields): Promise<NoteRow | undefined> {
      return (await db.write<NoteRow>(SQL.replace, [id, title, body])).rows[0];
    },

    /** Whether a note was deleted. */
    async remove(id: number): Promise<boolean> {
      return ((await db.write(SQL.delete, [id])).rowCount ?? 0) > 0;
    },
  };
}
