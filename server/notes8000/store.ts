import type { Database } from '../shared/database.js';

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

const utcTimestamp = (db: Database, column: string) =>
  db.raw(`to_char(?? AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS ??`, [column, column]);

export function noteStore(db: Database) {
  const columns = ['id', 'title', 'content', utcTimestamp(db, 'created_at'), utcTimestamp(db, 'updated_at')];
  const notes = () => db('notes');

  /** Ids that no note can have (zero, negative, beyond the column) are not sent to PostgreSQL, which would reject them. */
  const canExist = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;

  async function find(id: number): Promise<NoteRow | undefined> {
    if (!canExist(id)) return undefined;
    return notes().select(columns).where({ id }).first();
  }

  return {
    find,

    list(): Promise<NoteRow[]> {
      return notes().select(columns).orderBy('id', 'desc');
    },

    async create(fields: Required<NoteChanges>): Promise<NoteRow> {
      const [row] = await notes().insert(fields).returning<NoteRow[]>(columns);
      return row;
    },

    /** The note after the changes, or undefined when there is no such note. */
    async update(id: number, changes: NoteChanges): Promise<NoteRow | undefined> {
      // Nothing to change: like SQLAlchemy, send no UPDATE, so `updated_at` stays as it is.
      if (Object.keys(changes).length === 0) return find(id);
      if (!canExist(id)) return undefined;
      const [row] = await notes().where({ id }).update(changes).returning<NoteRow[]>(columns);
      return row;
    },

    /** Whether a note was deleted. */
    async remove(id: number): Promise<boolean> {
      if (!canExist(id)) return false;
      return (await notes().where({ id }).delete()) > 0;
    },
  };
}

export type NoteStore = ReturnType<typeof noteStore>;
