import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Database } from '../db/pool.js';
import { httpError } from '../http/errors.js';
import type { HeaderParameter } from '../http/route.js';

export const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "A key of the client's choosing (1–255 visible ASCII characters) that makes a retry safe: " +
    'the same key with the same body, from the same client address, ' +
    'returns the original answer and creates nothing; ' +
    'the same key with another body is refused. ' +
    'Keys are kept 24 hours (IDEMPOTENCY_TTL_SECONDS).',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
} satisfies HeaderParameter;

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
    throw httpError(400, `${IDEMPOTENCY_KEY.name} must be 1 to 255 visible ASCII characters`);
  return key;
}

const UNIQUE_VIOLATION = '23505';
const SWEEP_EVERY_MS = 60_000;

/**
 * Runs `create([client, key, fingerprint])` once per key of a client, which keeps the answer; a
 * retry with the same input gets it back byte for byte, with another input an IdempotencyConflict.
 * A key older than `ttlSeconds` counts as unused, and the pool's upkeep deletes it.
 */
export function idempotentCreates(db: Database, ttlSeconds: number) {
  const expired = 'created_at < now() - make_interval(secs => $1)';
  db.every(SWEEP_EVERY_MS, () =>
    db.query(`DELETE FROM idempotency_keys WHERE ${expired}`, [ttlSeconds]),
  );
  return async (
    client: string,
    key: string,
    input: unknown,
    create: (keyed: unknown[]) => Promise<{ json: string }>,
  ): Promise<string> => {
    const fingerprint = createHash('sha256').update(JSON.stringify(input)).digest('base64url');
    for (let attempt = 0; ; attempt++) {
      try {
        return (await create([client, key, fingerprint])).json;
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION || attempt > 0) throw error;
      }
      const { rows } = await db.query<{ fingerprint: string; answer: string; expired: boolean }>(
        `SELECT fingerprint, answer, ${expired} AS expired
         FROM idempotency_keys WHERE client = $2 AND key = $3`,
        [ttlSeconds, client, key],
      );
      const kept = rows[0];
      if (kept && !kept.expired) {
        if (kept.fingerprint !== fingerprint) throw new IdempotencyConflict();
        return kept.answer;
      }
      await db.query(`DELETE FROM idempotency_keys WHERE ${expired} AND client = $2 AND key = $3`, [
        ttlSeconds,
        client,
        key,
      ]);
    }
  };
}
