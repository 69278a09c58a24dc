import { renderedNote, type Database } from '../shared/database.js';
import { noteTable, versionIn } from '../shared/noteTable.js';
import type { Condition } from '../shared/preconditions.js';
import { inTime } from '../shared/writeFence.js';

/**
 * A note as the API shows it: `created_at` as RFC 3339 in UTC with the column's milliseconds (what
 * toISOString writes).
 */
const PRESENTED = `id, title, body, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

export function noteStore(db: Database) {
  const table = noteTable(db, { service: 'notes8080', textColumn: 'body', presented: PRESENTED });
  // The version moves only when the note does: replacing it with what it holds keeps its ETag.
  const replace = table.named(
    'replace',
    `WITH replaced AS (
      UPDATE notes SET title = $2::text, body = $3::text, version = version + CASE WHEN (title::text, body) IS DISTINCT FROM ($2::text, $3::text) THEN 1 ELSE 0 END
      WHERE id = $1 AND ${inTime(4)} AND ${versionIn(5)} RETURNING *
    ) ${renderedNote(PRESENTED, 'replaced')}`,
  );
  return {
    ...table,
    /** Replaces the title and the body, if the note is a version `wanted` accepts. */
    replace: (id: number, title: string, body: string, wanted?: Condition) =>
      table.update(replace, id, [title, body], wanted),
  };
}
