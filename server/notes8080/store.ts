import { renderedJson, type Database } from '../shared/database.js';
import { noteTable } from '../shared/noteTable.js';
import { inTime } from '../shared/writeFence.js';

/** A note as the API shows it: `created_at` as RFC 3339 in UTC with the column's milliseconds (what toISOString writes). */
const PRESENTED = `id, title, body, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

export function noteStore(db: Database) {
  const table = noteTable(db, { service: 'notes8080', textColumn: 'body', presented: PRESENTED });
  const replace = table.named('replace', `WITH replaced AS (UPDATE notes SET title = $2, body = $3 WHERE id = $1 AND ${inTime(4)} RETURNING *) ${renderedJson(PRESENTED, 'replaced')}`);
  return {
    ...table,
    /** The replaced note's JSON, or undefined when there is no such note. */
    replace: (id: number, title: string, body: string) => db.text(replace, [id, title, body, db.deadline()]),
  };
}
