import { renderedNote, type Database } from '../shared/database.js';
import { noteTable, versionIn, type WriteOutcome, type RenderedNote } from '../shared/noteTable.js';
import type { Condition } from '../shared/preconditions.js';
import { MAX_NOTE_ID } from '../shared/safeWrites.js';
import { inTime } from '../shared/writeFence.js';

export interface NoteChanges {
  title?: string;
  content?: string;
}

/**
 * Python's `datetime.isoformat()` of the naive UTC timestamp, with the column's microseconds (a JS
 * Date would cut them to milliseconds), the fraction left out when it is exactly zero. One
 * `to_char`, its zero fraction then removed: two (the seconds, then the fraction when there is
 * one) cost PostgreSQL about a fifth more for a list.
 */
const pythonIsoformat = (column: string) =>
  `replace(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '.000000', '') AS ${column}`;

/** A note as the API shows it: exactly these five fields. */
const PRESENTED = `id, title, content, ${pythonIsoformat('created_at')}, ${pythonIsoformat('updated_at')}`;

/**
 * Ids that no note can have (zero, negative, beyond the column) are not sent to PostgreSQL, which
 * would reject them.
 */
const canExist = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_NOTE_ID;

const MISSING = { missing: true } as const;

export function noteStore(db: Database) {
  const table = noteTable(db, {
    service: 'notes8000',
    textColumn: 'content',
    presented: PRESENTED,
  });
  // A null parameter keeps the stored value: the partial update of the spec. The version and
  // `updated_at` move only when the note does (an update that changes nothing leaves it as it
  // was, as SQLAlchemy, which then sends no UPDATE at all, does).
  const changed =
    '(title::text, content) IS DISTINCT FROM (coalesce($2::text, title), coalesce($3::text, content))';
  const update = table.named(
    'update',
    `WITH updated AS (
      UPDATE notes SET title = coalesce($2::text, title), content = coalesce($3::text, content),
        version = version + CASE WHEN ${changed} THEN 1 ELSE 0 END,
        updated_at = CASE WHEN ${changed} THEN now() ELSE updated_at END
      WHERE id = $1 AND ${inTime(4)} AND ${versionIn(5)} RETURNING *
    ) ${renderedNote(PRESENTED, 'updated')}`,
  );
  return {
    ...table,
    find: (id: number) => (canExist(id) ? table.find(id) : Promise.resolve(undefined)),

    /** The note after the changes, if it is a version `wanted` accepts. */
    update(
      id: number,
      { title, content }: NoteChanges,
      wanted?: Condition,
    ): Promise<WriteOutcome<RenderedNote>> {
      if (!canExist(id)) return Promise.resolve(MISSING);
      // Nothing to change: like SQLAlchemy, send no UPDATE, so `updated_at` stays as it is.
      if (title === undefined && content === undefined) return table.check(id, wanted);
      return table.update(update, id, [title ?? null, content ?? null], wanted);
    },

    /** Deletes the note, if it is a version `wanted` accepts. */
    remove: (id: number, wanted?: Condition): Promise<WriteOutcome<true>> =>
      canExist(id) ? table.remove(id, wanted) : Promise.resolve(MISSING),
  };
}
