import { batchesById, batchStatement, renderedJson, type Database, type Statement } from './database.js';
import { recordCreated } from './idempotency.js';
import { inTime } from './writeFence.js';

/** A notes service's table: the column that holds a note's text, and its note as the JSON its spec shows. */
export interface NoteShape {
  /** The service's name, which names its prepared statements. */
  service: string;
  textColumn: 'body' | 'content';
  /** The SELECT list that renders a row of `notes` as the service's note (see renderedJson). */
  presented: string;
}

/**
 * What both notes services do with their `notes` table, every note rendered by PostgreSQL as the
 * JSON text of the answer (no row object, no Date, no JSON.stringify in between), each statement
 * prepared once per connection. Writes carry the moment their client stops waiting (inTime).
 * The table may hold columns of its own (8080 completes an existing one): `RETURNING *` feeds
 * `presented`, which names what is shown.
 */
export function noteTable(db: Database, { service, textColumn, presented }: NoteShape) {
  const named = (name: string, text: string): Statement => ({ name: `${service}.${name}`, text });
  const SQL = {
    list: batchStatement(`${service}.list`, 'notes', presented, `octet_length(title) + octet_length(${textColumn})`),
    find: named('find', renderedJson(presented, 'notes WHERE id = $1')),
    insert: named('insert', `WITH created AS (INSERT INTO notes (title, ${textColumn}) SELECT $1, $2 WHERE ${inTime(3)} RETURNING *) ${renderedJson(presented, 'created')}`),
    insertRecorded: named('insertRecorded', recordCreated(`INSERT INTO notes (title, ${textColumn}) SELECT $3, $4 WHERE ${inTime(5)} RETURNING *`, presented)),
    remove: named('remove', `DELETE FROM notes WHERE id = $1 AND ${inTime(2)}`),
  };
  return {
    /** Every note, newest first, a batch of JSON objects at a time. */
    list: () => batchesById(db, SQL.list),

    /** The note's JSON, or undefined when there is none. */
    find: (id: number) => db.text(SQL.find, [id]),

    /** The created note's JSON. */
    insert: async (title: string, text: string) => (await db.text(SQL.insert, [title, text, db.deadline()]))!,

    /** The create, recorded under an idempotency key with its answer (see createOnce). */
    insertRecorded: (title: string, text: string) => async (key: string, fingerprint: string) =>
      (await db.text(SQL.insertRecorded, [key, fingerprint, title, text, db.deadline()]))!,

    /** Whether a note was deleted. */
    remove: async (id: number) => ((await db.query(SQL.remove, [id, db.deadline()])).rowCount ?? 0) > 0,

    /** A statement of the service's own on the table, prepared under the service's name. */
    named,
  };
}
