import type { Database } from '../db/pool.js';
import { acceptedTags, type Condition } from './preconditions.js';

/** A note as an answer carries it: its JSON, rendered by PostgreSQL, and its ETag. */
export interface RenderedNote {
  json: string;
  etag: string;
}

/** What a conditional write found: done, no such note, or another version than If-Match named. */
export type Written<T> = { done: T } | { missing: true } | { changed: true };

/** The largest id a note may have: JSON numbers are exact up to it (2^53 - 1). */
export const MAX_NOTE_ID = Number.MAX_SAFE_INTEGER;

export interface NoteShape {
  /** The service's name, which names its prepared statements. */
  service: string;
  textColumn: 'body' | 'content';
  /** The SELECT list that renders a row of `notes` as the service's note. */
  presented: string;
}

/**
 * The JSON object of `presented` for each row of `from` (`notes WHERE id = $1`, or a write's
 * RETURNING rows), and its version as a strong entity tag: the answer's body and ETag, rendered
 * where the data is.
 */
const rendered = (presented: string, from: string) =>
  `SELECT (SELECT row_to_json(note) FROM (SELECT ${presented}) AS note)::text AS json,
    '"' || version || '"' AS etag FROM ${from}`;

/** A write's condition: the note's version is one of the tags `$n`, or `$n` is null. */
export const versionIn = (parameter: number) =>
  `($${parameter}::text[] IS NULL OR '"' || version || '"' = ANY($${parameter}::text[]))`;

/**
 * What both notes services do with their `notes` table, each job one statement, prepared once per
 * connection; a write's precondition (If-Match) is checked inside it.
 */
export function noteTable(db: Database, { service, textColumn, presented }: NoteShape) {
  const statement = (name: string, text: string) => ({ name: `${service}.${name}`, text });
  const SQL = {
    find: statement('find', rendered(presented, 'notes WHERE id = $1')),
    insert: statement(
      'insert',
      `WITH created AS (INSERT INTO notes (title, ${textColumn}) VALUES ($1, $2) RETURNING *)
      ${rendered(presented, 'created')}`,
    ),
    // The note, and its answer kept under the client's key: both or neither. A key the client
    // used already makes the whole statement fail (a unique violation).
    insertKeyed: statement(
      'insertKeyed',
      `WITH created AS (INSERT INTO notes (title, ${textColumn}) VALUES ($1, $2) RETURNING *),
      answer AS (${rendered(presented, 'created')}),
      kept AS (INSERT INTO idempotency_keys (client, key, fingerprint, answer)
        SELECT $3, $4, $5, json FROM answer)
      SELECT json, etag FROM answer`,
    ),
    remove: statement('remove', `DELETE FROM notes WHERE id = $1 AND ${versionIn(2)}`),
    // A page's newest and oldest ids, and whether older notes follow it.
    page: statement(
      'page',
      `WITH page AS (SELECT id FROM notes WHERE id < $1 ORDER BY id DESC LIMIT $2)
      SELECT max(id) AS newest, min(id) AS oldest,
        EXISTS (SELECT 1 FROM notes WHERE id < (SELECT min(id) FROM page)) AS more FROM page`,
    ),
  };
  const first = async <Row>(query: Promise<{ rows: Row[] }>) => (await query).rows[0];
  const find = (id: number) => first<RenderedNote>(db.query(SQL.find, [id]));

  /**
   * What a write that changed no row met: no such note, or (If-Match naming versions: a note gone
   * since the client read it is a change it did not see) another version.
   */
  async function unchanged<T>(id: number, wanted: Condition | undefined): Promise<Written<T>> {
    if (wanted === undefined) return { missing: true };
    return (await find(id)) || wanted !== 'any' ? { changed: true } : { missing: true };
  }

  return {
    statement,
    find,
    insert: async (title: string, text: string) =>
      (await first<RenderedNote>(db.query(SQL.insert, [title, text])))!,
    insertKeyed: async (title: string, text: string, keyed: unknown[]) =>
      (await first<RenderedNote>(db.query(SQL.insertKeyed, [title, text, ...keyed])))!,

    /**
     * The newest `limit` notes below `below`: their id range, and whether older ones follow; none
     * when there are none.
     */
    async page(below: number, limit: number) {
      const row = await first<{ newest: number | null; oldest: number; more: boolean }>(
        db.query(SQL.page, [below, limit]),
      );
      if (row?.newest == null) return undefined;
      return { range: { below: row.newest + 1, from: row.oldest }, more: row.more };
    },

    /** Deletes the note, if it is a version `wanted` accepts. */
    async remove(id: number, wanted?: Condition): Promise<Written<true>> {
      const { rowCount } = await db.query(SQL.remove, [id, acceptedTags(wanted)]);
      return rowCount ? { done: true } : unchanged(id, wanted);
    },

    /**
     * The service's own update of a note (a statement of `statement`, whose rows are `rendered`'s,
     * its last parameter the versions accepted), if the note is a version `wanted` accepts.
     */
    async update(
      update: { name: string; text: string },
      id: number,
      values: unknown[],
      wanted?: Condition,
    ): Promise<Written<RenderedNote>> {
      const row = await first<RenderedNote>(
        db.query(update, [id, ...values, acceptedTags(wanted)]),
      );
      return row ? { done: row } : unchanged(id, wanted);
    },

    /** Whether the note is a version `wanted` accepts, for a write that changes nothing. */
    async check(id: number, wanted?: Condition): Promise<Written<RenderedNote>> {
      const row = await find(id);
      if (!row)
        return wanted !== undefined && wanted !== 'any' ? { changed: true } : { missing: true };
      return acceptedTags(wanted)?.includes(row.etag) === false ? { changed: true } : { done: row };
    },

    /** The SQL of a write's rows rendered as notes, for a service's own update. */
    rendered: (from: string) => rendered(presented, from),
  };
}

export type NoteTable = ReturnType<typeof noteTable>;

/** What the storage count says now, in bytes: the sum of its shards (see the migration). */
export async function storedBytes(db: Database): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>(
    'SELECT coalesce(sum(bytes), 0)::float8 AS bytes FROM storage_shards',
  );
  return rows[0]!.bytes;
}
