import type { Database } from '../db/pool.js';
import { acceptedTags, type Condition } from './preconditions.js';

/** A note as an answer carries it: its JSON, rendered by PostgreSQL, and its ETag. */
export interface RenderedNote {
  json: string;
  etag: string;
}

/** The largest id a note may have: JSON numbers are exact up to it. */
export const MAX_NOTE_ID = Number.MAX_SAFE_INTEGER;

export interface NoteShape {
  /** The service's name, which names its prepared statements. */
  service: string;
  textColumn: 'body' | 'content';
  /** The SELECT list that renders a row of `notes` as the service's note. */
  presented: string;
  /** The SET list of an update, from the id `$1` and the texts `$2` and `$3`. */
  changes: string;
}

/** The notes of `from` as JSON objects, and each one's version as a strong ETag. */
const rendered = (presented: string, from: string) =>
  `SELECT (SELECT row_to_json(note) FROM (SELECT ${presented}) AS note)::text AS json,
    '"' || version || '"' AS etag FROM ${from}`;

/** If-Match, checked by the write: the version is one of the tags `$n`, or `$n` is null. */
const versionIn = (n: number) =>
  `($${n}::text[] IS NULL OR '"' || version || '"' = ANY($${n}::text[]))`;

/** What both notes services do with their `notes` table, each job one prepared statement. */
export function noteTable(db: Database, { service, textColumn, presented, changes }: NoteShape) {
  const statement = (name: string, text: string) => ({ name: `${service}.${name}`, text });
  const created = `WITH created AS (
    INSERT INTO notes (title, ${textColumn}) VALUES ($1, $2) RETURNING *
  )`;
  const SQL = {
    find: statement('find', rendered(presented, 'notes WHERE id = $1')),
    insert: statement('insert', `${created} ${rendered(presented, 'created')}`),
    // The note and its answer kept under the client's key, both or neither: a key used already
    // fails the whole statement (a unique violation).
    insertKeyed: statement(
      'insertKeyed',
      `${created}, answer AS (${rendered(presented, 'created')}),
      kept AS (INSERT INTO idempotency_keys (client, key, fingerprint, answer)
        SELECT $3, $4, $5, json FROM answer)
      SELECT json, etag FROM answer`,
    ),
    update: statement(
      'update',
      `WITH updated AS (UPDATE notes SET ${changes} WHERE id = $1 AND ${versionIn(4)} RETURNING *)
      ${rendered(presented, 'updated')}`,
    ),
    remove: statement('remove', `DELETE FROM notes WHERE id = $1 AND ${versionIn(2)}`),
  };
  const first = async (query: Promise<{ rows: RenderedNote[] }>) => (await query).rows[0];

  return {
    /** The note, if it is a version `wanted` accepts. */
    async find(id: number, wanted?: Condition) {
      const note = await first(db.query(SQL.find, [id]));
      return note && acceptedTags(wanted)?.includes(note.etag) !== false ? note : undefined;
    },
    /** Inserts a note; with `keyed` ([client, key, fingerprint]), its answer is kept too. */
    insert: async (title: string, text: string, keyed: unknown[] = []) =>
      (await first(
        db.query(keyed.length ? SQL.insertKeyed : SQL.insert, [title, text, ...keyed]),
      ))!,
    /** The note as changed, if it is a version `wanted` accepts. */
    update: (id: number, texts: unknown[], wanted?: Condition) =>
      first(db.query(SQL.update, [id, ...texts, acceptedTags(wanted)])),
    /** Whether a note of a version `wanted` accepts was deleted. */
    remove: async (id: number, wanted?: Condition) =>
      Boolean((await db.query(SQL.remove, [id, acceptedTags(wanted)])).rowCount),
  };
}

/** What the storage count says now, in bytes: the sum of its shards. */
export async function storedBytes(db: Database): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>(
    'SELECT coalesce(sum(bytes), 0)::float8 AS bytes FROM storage_shards',
  );
  return rows[0]!.bytes;
}
