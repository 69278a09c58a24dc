import { batchesById, batchStatement, type Database } from '../shared/database.js';
import { recordCreated, type Recorded } from '../shared/idempotency.js';
import { inTime } from '../shared/writeFence.js';

/**
 * A note as the store returns it. The timestamps are already text (ISO 8601 in UTC, with the
 * column's microseconds), formatted by PostgreSQL: a JS Date would cut them to milliseconds.
 */
export interface NoteRow {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

export interface NoteChanges {
  title?: string;
  content?: string;
}

/** The largest value of the `id` column (PostgreSQL `serial`, i.e. `integer`). */
const MAX_ID = 2_147_483_647;

const utcTimestamp = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS ${column}`;

const COLUMNS = `id, title, content, ${utcTimestamp('created_at')}, ${utcTimestamp('updated_at')}`;
const SQL = {
  list: batchStatement('notes', COLUMNS, 'octet_length(title) + octet_length(content)'),
  find: `SELECT ${COLUMNS} FROM notes WHERE id = $1`,
  insert: `INSERT INTO notes (title, content) SELECT $1, $2 WHERE ${inTime(3)} RETURNING ${COLUMNS}`,
  insertRecorded: recordCreated(`INSERT INTO notes (title, content) SELECT $3, $4 WHERE ${inTime(5)} RETURNING ${COLUMNS}`),
  // A null parameter keeps the stored value: the partial update of the spec.
  update: `UPDATE notes SET title = coalesce($2, title), content = coalesce($3, content) WHERE id = $1 AND ${inTime(4)} RETURNING ${COLUMNS}`,
  delete: `DELETE FROM notes WHERE id = $1 AND ${inTime(2)}`,
};

/** Ids that no note can have (zero, negative, beyond the column) are not sent to PostgreSQL, which would reject them. */
const canExist = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;

export function noteStore(db: Database) {
  async function find(id: number): Promise<NoteRow | undefined> {
    if (!canExist(id)) return undefined;
    return (await db.query<NoteRow>(SQL.find, [id])).rows[0];
  }

  return {
    find,

    /** Every note, newest first, a batch at a time. */
    list: () => batchesById<NoteRow>(db, SQL.list),

    async create({ title, content }: Required<NoteChanges>): Promise<NoteRow> {
      return (await db.write<NoteRow>(SQL.insert, [title, content])).rows[0]!;
    },

    /** The create of a note, recorded under an idempotency key (see createOnce); the row is already JSON-ready text. */
    recorded({ title, content }: Required<NoteChanges>): Recorded<NoteRow> {
      return {
        create: async (key, fingerprint) => (await db.write<NoteRow>(SQL.insertRecorded, [key, fingerprint, title, content])).rows[0]!,
        replay: (recorded) => recorded as NoteRow,
      };
    },

    /** The note after the changes, or undefined when there is no such note. */
    async update(id: number, { title, content }: NoteChanges): Promise<NoteRow | undefined> {
      // Nothing to change: like SQLAlchemy, send no UPDATE, so `updated_at` stays as it is.
      if (title === undefined && content === undefined) return find(id);
      if (!canExist(id)) return undefined;
      return (await db.write<NoteRow>(SQL.update, [id, title ?? null, content ?? null])).rows[0];
    },

    /** Whether a note was deleted. */
    async remove(id: number): Promise<boolean> {
      if (!canExist(id)) return false;
      return ((await db.write(SQL.delete, [id])).rowCount ?? 0) > 0;
    },
  };
}
