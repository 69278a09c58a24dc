import {
  batchesById,
  batchStatement,
  renderedNote,
  type Database,
  type IdRange,
  type Statement,
} from './database.js';
import { recordCreated } from './idempotency.js';
import { acceptedTags, type Condition } from './preconditions.js';
import { inTime } from './writeFence.js';

/**
 * A notes service's table: the column that holds a note's text, and its note as the JSON its spec
 * shows.
 */
export interface NoteShape {
  /** The service's name, which names its prepared statements. */
  service: string;
  textColumn: 'body' | 'content';
  /** The SELECT list that renders a row of `notes` as the service's note (see renderedNote). */
  presented: string;
}

/** A note as the answers carry it: its JSON and its ETag. */
export type RenderedNote = [json: string, etag: string];

/** The ETag of a note just created: its first version. */
export const CREATED_ETAG = '"1"';

/**
 * What a conditional write found: done, no such note, or a note of another version than If-Match
 * named.
 */
export type WriteOutcome<T> = { done: T } | { missing: true } | { changed: true };

/**
 * A write's WHERE clause that holds when the note's version is one of the tags `$n` (or `$n` is
 * null).
 */
export const versionIn = (parameter: number) =>
  `($${parameter}::text[] IS NULL OR '"' || version || '"' = ANY($${parameter}::text[]))`;

/**
 * What both notes services do with their `notes` table, every note rendered by PostgreSQL as the
 * JSON text of the answer with its ETag (no row object, no Date, no JSON.stringify in between),
 * each statement prepared once per connection. Writes carry the moment their client stops
 * waiting (inTime), and the versions If-Match accepts, checked in the same statement. The table
 * may hold columns of its own (8080 completes an existing one): `RETURNING *` feeds `presented`,
 * which names what is shown.
 */
export function noteTable(db: Database, { service, textColumn, presented }: NoteShape) {
  const named = (name: string, text: string): Statement => ({ name: `${service}.${name}`, text });
  const SQL = {
    list: batchStatement(
      `${service}.list`,
      'notes',
      presented,
      `octet_length(title) + octet_length(${textColumn})`,
    ),
    // A page's newest and oldest ids, and whether older notes follow it.
    page: named(
      'page',
      `WITH page AS (SELECT id FROM notes WHERE id < $1::bigint ORDER BY id DESC LIMIT $2)
       SELECT max(id)::text, min(id)::text, EXISTS (SELECT 1 FROM notes WHERE id < (SELECT min(id) FROM page))::text FROM page`,
    ),
    find: named('find', renderedNote(presented, 'notes WHERE id = $1')),
    insert: named(
      'insert',
      `WITH created AS (INSERT INTO notes (title, ${textColumn}) SELECT $1, $2 WHERE ${inTime(3)} RETURNING *) ${renderedNote(presented, 'created')}`,
    ),
    insertRecorded: named(
      'insertRecorded',
      recordCreated(
        `INSERT INTO notes (title, ${textColumn}) SELECT $3, $4 WHERE ${inTime(5)} RETURNING *`,
        presented,
      ),
    ),
    remove: named('remove', `DELETE FROM notes WHERE id = $1 AND ${inTime(2)} AND ${versionIn(3)}`),
  };
  const find = (id: number) => db.row(SQL.find, [id]) as Promise<RenderedNote | undefined>;

  /**
   * What a write that changed no row met: no such note (for If-Match naming versions, a note gone
   * since the client read it is a change it did not see: 412), or another version.
   */
  async function unchanged<T>(id: number, wanted: Condition | undefined): Promise<WriteOutcome<T>> {
    if (wanted === undefined) return { missing: true };
    return (await find(id)) || wanted !== 'any' ? { changed: true } : { missing: true };
  }

  return {
    /** Every note in the range, newest first, a batch of JSON objects at a time. */
    list: (range?: IdRange) => batchesById(db, SQL.list, range),

    /**
     * The newest `limit` notes below `below`: their id range, and whether older ones follow; none
     * when there are none.
     */
    async page(
      below: number,
      limit: number,
    ): Promise<{ range: Required<IdRange>; more: boolean } | undefined> {
      const [newest, oldest, more] = (await db.row(SQL.page, [below, limit]))!;
      if (newest === null) return undefined;
      return { range: { below: Number(newest) + 1, from: Number(oldest) }, more: more === 'true' };
    },

    /** The note, or undefined when there is none. */
    find,

    /** The created note. */
    insert: (title: string, text: string) =>
      db.row(SQL.insert, [title, text, db.deadline()]) as Promise<RenderedNote>,

    /**
     * The create, recorded under an idempotency key with its answer's JSON (see createOnce); its
     * ETag is CREATED_ETAG.
     */
    insertRecorded: (title: string, text: string) => async (key: string, fingerprint: string) =>
      (await db.row(SQL.insertRecorded, [key, fingerprint, title, text, db.deadline()]))![0]!,

    /** Deletes the note, if it is a version `wanted` accepts. */
    async remove(id: number, wanted?: Condition): Promise<WriteOutcome<true>> {
      const { rowCount } = await db.query(SQL.remove, [id, db.deadline(), acceptedTags(wanted)]);
      return rowCount ? { done: true } : unchanged(id, wanted);
    },

    /**
     * Runs the service's own update of the note (a statement whose rows are renderedNote's, its
     * last two parameters the deadline and the accepted versions), if it is a version `wanted`
     * accepts.
     */
    async update(
      statement: Statement,
      id: number,
      values: unknown[],
      wanted?: Condition,
    ): Promise<WriteOutcome<RenderedNote>> {
      const row = (await db.row(statement, [
        id,
        ...values,
        db.deadline(),
        acceptedTags(wanted),
      ])) as RenderedNote | undefined;
      return row ? { done: row } : unchanged(id, wanted);
    },

    /**
     * Whether the note is a version `wanted` accepts (for a write that changes nothing, and so
     * sends no statement).
     */
    async check(id: number, wanted?: Condition): Promise<WriteOutcome<RenderedNote>> {
      const row = await find(id);
      if (!row)
        return wanted !== undefined && wanted !== 'any' ? { changed: true } : { missing: true };
      return acceptedTags(wanted)?.includes(row[1]) === false ? { changed: true } : { done: row };
    },

    /** A statement of the service's own on the table, prepared under the service's name. */
    named,
  };
}
