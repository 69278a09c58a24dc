import { renderedJson, type Database } from '../shared/database.js';
import { noteTable } from '../shared/noteTable.js';
import { inTime } from '../shared/writeFence.js';

export interface NoteChanges {
  title?: string;
  content?: string;
}

/** The largest value of the `id` column (PostgreSQL `serial`, i.e. `integer`). */
const MAX_ID = 2_147_483_647;

/**
 * Python's `datetime.isoformat()` of the naive UTC timestamp, with the column's microseconds (a JS
 * Date would cut them to milliseconds), the fraction left out when it is exactly zero.
 */
const pythonIsoformat = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || CASE WHEN extract(microseconds FROM ${column}) % 1000000 = 0 THEN '' ELSE to_char(${column} AT TIME ZONE 'UTC', '.US') END AS ${column}`;

/** A note as the API shows it: exactly these five fields. */
const PRESENTED = `id, title, content, ${pythonIsoformat('created_at')}, ${pythonIsoformat('updated_at')}`;

/** Ids that no note can have (zero, negative, beyond the column) are not sent to PostgreSQL, which would reject them. */
const canExist = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;

export function noteStore(db: Database) {
  const table = noteTable(db, { service: 'notes8000', textColumn: 'content', presented: PRESENTED });
  // A null parameter keeps the stored value: the partial update of the spec.
  const update = table.named(
    'update',
    `WITH updated AS (UPDATE notes SET title = coalesce($2, title), content = coalesce($3, content) WHERE id = $1 AND ${inTime(4)} RETURNING *) ${renderedJson(PRESENTED, 'updated')}`,
  );
  const find = (id: number) => (canExist(id) ? table.find(id) : Promise.resolve(undefined));
  return {
    ...table,
    find,

    /** The note's JSON after the changes, or undefined when there is no such note. */
    update(id: number, { title, content }: NoteChanges): Promise<string | undefined> {
      // Nothing to change: like SQLAlchemy, send no UPDATE, so `updated_at` stays as it is.
      if (title === undefined && content === undefined) return find(id);
      if (!canExist(id)) return Promise.resolve(undefined);
      return db.text(update, [id, title ?? null, content ?? null, db.deadline()]);
    },

    /** Whether a note was deleted. */
    remove: (id: number) => (canExist(id) ? table.remove(id) : Promise.resolve(false)),
  };
}
