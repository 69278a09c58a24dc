import type { Database } from '../db/pool.js';
import { httpError } from '../http/errors.js';

/** What a precondition header asks: any current note (`*`), or one of these entity tags. */
export type Condition = 'any' | string[];

/** The tags a write accepts: null for none to check (no If-Match, or `*`: the note exists). */
const acceptedTags = (wanted: Condition | undefined) =>
  wanted === undefined || wanted === 'any' ? null : wanted;

/** A note as PostgreSQL renders it for an answer. */
export interface NoteJson {
  json: string;
  etag: string;
}

export interface NoteSql {
  /** Names the prepared statements. */
  service: string;
  textColumn: 'body' | 'content';
  /** The SELECT list that renders a row of `notes` as the service's note. */
  select: string;
  /** The SET list of an update, from the id `$1` and the texts `$2` and `$3`. */
  set: string;
}

/** The largest id a note may have: JSON numbers are exact up to it. */
export const MAX_NOTE_ID = Number.MAX_SAFE_INTEGER;
export const STORAGE_FULL = 'Storage limit reached: delete notes to make room';
/** PostgreSQL's `disk_full`, which the storage count raises past NOTES_MAX_BYTES. */
const DISK_FULL = '53100';

/** The notes of `from` as JSON objects, and each one's version as a strong ETag. */
const rendered = (select: string, from: string) =>
  `SELECT (SELECT row_to_json(note) FROM (SELECT ${select}) AS note)::text AS json,
    '"' || version || '"' AS etag FROM ${from}`;

/** If-Match, checked by the write: the version is one of the tags `$n`, or `$n` is null. */
const versionIn = (n: number) =>
  `($${n}::text[] IS NULL OR '"' || version || '"' = ANY($${n}::text[]))`;

/** Each job on the `notes` table one prepared statement. */
export function noteTable(db: Database, { service, textColumn, select, set }: NoteSql) {
  const statement = (name: string, text: string) => ({ name: `${service}.${name}`, text });
  const created = `WITH created AS (
    INSERT INTO notes (title, ${textColumn}) VALUES ($1, $2) RETURNING *
  )`;
  const SQL = {
    find: statement('find', rendered(select, 'notes WHERE id = $1')),
    insert: statement('insert', `${created} ${rendered(select, 'created')}`),
    // The note and its answer kept under the client's key, both or neither: a key used already
    // fails the whole statement (a unique violation).
    insertKeyed: statement(
      'insertKeyed',
      `${created}, answer AS (${rendered(select, 'created')}),
      kept AS (INSERT INTO idempotency_keys (client, key, fingerprint, answer)
        SELECT $3, $4, $5, json FROM answer)
      SELECT json, etag FROM answer`,
    ),
    update: statement(
      'update',
      `WITH updated AS (UPDATE notes SET ${set} WHERE id = $1 AND ${versionIn(4)} RETURNING *)
      ${rendered(select, 'updated')}`,
    ),
    remove: statement('remove', `DELETE FROM notes WHERE id = $1 AND ${versionIn(2)}`),
  };
  const first = async (statement: { name: string; text: string }, values: unknown[]) => {
    const { rows } = await db.query<NoteJson>(statement, values).catch((error: unknown) => {
      if ((error as { code?: string }).code !== DISK_FULL) throw error;
      throw httpError(507, STORAGE_FULL);
    });
    return rows[0];
  };

  return {
    async find(id: number, condition?: Condition) {
      const note = await first(SQL.find, [id]);
      return note && acceptedTags(condition)?.includes(note.etag) !== false ? note : undefined;
    },
    /** Inserts a note; with `keyed` ([client, key, fingerprint]), its answer is kept too. */
    insert: async (title: string, text: string, keyed: unknown[] = []) =>
      (await first(keyed.length ? SQL.insertKeyed : SQL.insert, [title, text, ...keyed]))!,
    update: (id: number, texts: unknown[], condition?: Condition) =>
      first(SQL.update, [id, ...texts, acceptedTags(condition)]),
    remove: async (id: number, condition?: Condition) =>
      Boolean((await db.query(SQL.remove, [id, acceptedTags(condition)])).rowCount),
  };
}

export async function storedBytes(db: Database): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>(
    'SELECT coalesce(sum(bytes), 0)::float8 AS bytes FROM storage_shards',
  );
  return rows[0]!.bytes;
}
