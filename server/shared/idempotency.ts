import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import type { Database } from './database.js';
import { HttpError } from './errors.js';

/**
 * `Idempotency-Key` on a create: a client that did not get an answer (a timeout, a 500, a lost
 * connection) sends the same request again with the same key, and gets the original answer
 * instead of a second note. Keys live in the service's own schema for `ttlSeconds`.
 */
export const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "A key of the client's choosing (1–255 visible ASCII characters) that makes a retry safe: the same key with the same body returns the original answer and creates nothing; the same key with another body is refused. Keys are kept 24 hours (IDEMPOTENCY_TTL_SECONDS).",
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
} as const;

const VALID_KEY = new RegExp(IDEMPOTENCY_KEY.schema.pattern);

/** The key was already used with another body; each service words it its own way. */
export class IdempotencyConflict extends Error {
  name = 'IdempotencyConflict';
  constructor() {
    super(`This ${IDEMPOTENCY_KEY.name} was already used with another request body`);
  }
}

/** The request's key, or undefined without one; a malformed key is a 400. */
export function idempotencyKey(ctx: Context): string | undefined {
  const key = ctx.get(IDEMPOTENCY_KEY.name);
  if (key === '') return undefined;
  if (!VALID_KEY.test(key))
    throw new HttpError(400, `${IDEMPOTENCY_KEY.name} must be 1 to 255 visible ASCII characters`);
  return key;
}

const UNIQUE_VIOLATION = '23505';

/** What tells one request body from another under the same key: a SHA-256 of its input. */
const fingerprintOf = (input: unknown) =>
  createHash('sha256').update(JSON.stringify(input)).digest('base64url');

/** The length of every fingerprint, in bytes. */
export const FINGERPRINT_BYTES = fingerprintOf(null).length;

/**
 * Runs `create(key, fingerprint)` once per key: a first request creates and records the answer's
 * JSON text (see `recordCreated`); a retry with the same body gets the recorded text back, byte
 * for byte; a retry with another body is an IdempotencyConflict. A key older than `ttlSeconds`
 * counts as unused.
 */
export async function createOnce(
  db: Database,
  key: string,
  input: unknown,
  ttlSeconds: number,
  create: (key: string, fingerprint: string) => Promise<string>,
): Promise<string> {
  sweepNowAndThen(db, ttlSeconds);
  const fingerprint = fingerprintOf(input);
  for (let attempt = 0; ; attempt++) {
    try {
      return await create(key, fingerprint);
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION || attempt > 0) throw error;
    }
    const { rows } = await db.query<{ fingerprint: string; answer: string; expired: boolean }>(
      'SELECT fingerprint, answer, created_at < now() - make_interval(secs => $2) AS expired FROM idempotency_keys WHERE key = $1',
      [key, ttlSeconds],
    );
    const recorded = rows[0];
    if (recorded && !recorded.expired) {
      if (recorded.fingerprint !== fingerprint) throw new IdempotencyConflict();
      return recorded.answer;
    }
    await db.query(
      'DELETE FROM idempotency_keys WHERE key = $1 AND created_at < now() - make_interval(secs => $2)',
      [key, ttlSeconds],
    );
  }
}

const SWEEP_EVERY_MS = 60_000;
const lastSweep = new WeakMap<Database, number>();

/**
 * Deletes the expired keys, at most once a minute per pool, beside the request that triggers it.
 */
function sweepNowAndThen(db: Database, ttlSeconds: number): void {
  if (Date.now() - (lastSweep.get(db) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(db, Date.now());
  // A sweep that fails is tried again a minute later; the request does not wait for it.
  db.query('DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1)', [
    ttlSeconds,
  ]).catch(() => undefined);
}

/**
 * The statement that creates a row with `insert` (an INSERT … RETURNING *, its parameters from
 * `$3`), renders it as the answer's JSON text (`columns` of it, see renderedJson), and records that
 * text under the key `$1` and fingerprint `$2`, in one statement: both or neither. A key already
 * recorded makes the whole statement fail with a unique violation.
 */
export const recordCreated = (insert: string, columns: string) => `WITH created AS (${insert}),
  rendered AS (SELECT row_to_json(note)::text AS answer FROM (SELECT ${columns} FROM created) AS note),
  recorded AS (INSERT INTO idempotency_keys (key, fingerprint, answer) SELECT $1, $2, answer FROM rendered)
  SELECT answer FROM rendered`;

/**
 * The keys' table as it was first made, for the migration that made it (a later one keeps answers
 * as text).
 */
export async function createIdempotencyKeys(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (table) => {
    table.text('key').primary();
    table.text('fingerprint').notNullable();
    table.jsonb('row').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now()).index();
  });
}
