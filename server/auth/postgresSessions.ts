import { createHash, randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Database } from '../db/pool.js';
import { matchesHash, newPasswordHash, normalizeEmail } from './accounts.js';
import type { PasswordHash, User } from './accounts.js';
import { sessionInfo, type StoredSession } from './sessions.js';
import type { Capped, Client, SessionLimits, SessionRef, SessionStore } from './sessions.js';

/** Serialize logins (so that the caps hold), sweeps, and instances comparing credentials. */
const [LOGIN_LOCK, SWEEP_LOCK, CREDENTIALS_LOCK] = [0x5e55, 0x5e56, 0x5e57];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const hashOf = (token: string) => createHash('sha256').update(token).digest();
const LIVE = 'JOIN credentials USING (user_id, generation) WHERE expires_at > now()';

/** Each token's live session, by its place in the batch; last seen refreshed once a minute. */
const LOOKUP = {
  name: 'sessions.lookup',
  text: `SELECT id, user_id AS "userId", at::int,
      last_seen_at < now() - interval '1 minute' AS stale
    FROM unnest($1::bytea[]) WITH ORDINALITY AS asked (token_hash, at)
    JOIN sessions USING (token_hash) ${LIVE}`,
};

/** The migration's function takes LOGIN_LOCK, ends the oldest past the caps and inserts. */
const CREATE = {
  name: 'sessions.create',
  text: `SELECT ended_owner AS "userId", cap, ended
    FROM create_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
};

const STORE_CREDENTIAL = `INSERT INTO credentials (user_id, email, salt, password_hash, cost)
  VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, salt = excluded.salt,
    password_hash = excluded.password_hash, cost = excluded.cost,
    generation = nextval('credential_generations')`;

/**
 * Sessions in table `sessions`, shared by every instance, each known by its token's SHA-256;
 * nothing is cached, so an ending holds everywhere at once. Each instance compares its credentials
 * with those in `credentials` at start: different, it stores its own under a new generation (from
 * a sequence, so none comes back), ending the account's sessions, and knows them by their salt:
 * once another instance replaces them, it admits no one to the account.
 */
export class PostgresSessionStore implements SessionStore {
  #salts: Promise<Map<string, Buffer>> | undefined;

  constructor(
    private readonly db: Database,
    private readonly limits: SessionLimits,
    private readonly credentials: { id: string; email: string; password: string }[],
    private readonly passwordHashCost: number,
  ) {}

  async create(user: User, { address, userAgent }: Client, generation: number) {
    const [token, id] = [randomUUID(), randomUUID()];
    const { ttlSeconds, maxPerUser, max } = this.limits;
    const session = [id, hashOf(token), user.id, ttlSeconds, address, userAgent, generation];
    const { rows } = await this.db.query<Capped>(CREATE, [...session, maxPerUser, max, LOGIN_LOCK]);
    return { token, capped: rows };
  }

  async find(token: string): Promise<SessionRef | undefined> {
    await this.checked();
    return this.#lookups.load(token);
  }

  /** The lookups of one turn of the event loop: one prepared statement, one round trip. */
  readonly #lookups = new DataLoader<string, SessionRef | undefined>(
    async (tokens) => {
      const { rows } = await this.db.query(LOOKUP, [tokens.map(hashOf)]);
      const found: (SessionRef | undefined)[] = tokens.map(() => undefined);
      for (const { id, userId, at } of rows) found[at - 1] = { id, userId };
      const stale = rows.filter((row) => row.stale).map(({ id }) => id);
      // Only administrators see it: the request does not wait, and a failure is retried next time.
      if (stale.length > 0)
        this.db
          .query('UPDATE sessions SET last_seen_at = now() WHERE id = ANY($1::uuid[])', [stale])
          .catch(() => undefined);
      return found;
    },
    { cache: false, maxBatchSize: 256, batchScheduleFn: (send) => setImmediate(send) },
  );

  remove(token: string): Promise<SessionRef | undefined> {
    return this.#first<SessionRef>(
      `WITH ended AS (DELETE FROM sessions WHERE token_hash = $1 RETURNING id, user_id, expires_at)
      SELECT id, user_id AS "userId" FROM ended WHERE expires_at > now()`,
      [hashOf(token)],
    );
  }

  async list(userId?: string) {
    const { rows } = await this.db.query<StoredSession>(
      `SELECT id, user_id AS "userId", address, user_agent AS "userAgent",
        created_at AS "createdAt", last_seen_at AS "lastSeenAt", expires_at AS "expiresAt"
      FROM sessions ${LIVE} AND ($1::text IS NULL OR user_id = $1) ORDER BY created_at`,
      [userId ?? null],
    );
    return rows.map(sessionInfo);
  }

  async count(): Promise<number> {
    return (await this.#first<{ live: number }>(
      `SELECT count(*)::int AS live FROM sessions ${LIVE}`,
    ))!.live;
  }

  async end(id: string, userId?: string): Promise<SessionRef | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.#first<SessionRef>(
      `DELETE FROM sessions WHERE id = $1 AND ($2::text IS NULL OR user_id = $2)
        RETURNING id, user_id AS "userId"`,
      [id, userId ?? null],
    );
  }

  async endAllOf(userId: string, except?: string): Promise<number> {
    const { rowCount } = await this.db.query(
      'DELETE FROM sessions WHERE user_id = $1 AND id IS DISTINCT FROM $2::uuid',
      [userId, except ?? null],
    );
    return rowCount ?? 0;
  }

  async generation(userId: string): Promise<number | undefined> {
    const salt = (await this.checked()).get(userId);
    const sql = 'SELECT generation FROM credentials WHERE user_id = $1 AND salt = $2';
    return (await this.#first<{ generation: number }>(sql, [userId, salt]))?.generation;
  }

  async renew(userId: string): Promise<void> {
    await this.db.query(
      "UPDATE credentials SET generation = nextval('credential_generations') WHERE user_id = $1",
      [userId],
    );
  }

  /** Deletes the expired rows, unless another instance is at it: how many. */
  sweep(): Promise<number> {
    return this.db.transaction(async (query) => {
      const { rows } = await query('SELECT pg_try_advisory_xact_lock($1) AS locked', [SWEEP_LOCK]);
      if (!rows[0].locked) return 0;
      return (await query('DELETE FROM sessions WHERE expires_at <= now()')).rowCount ?? 0;
    });
  }

  async #first<Row extends Record<string, unknown>>(sql: string, values?: unknown[]) {
    return (await this.db.query<Row>(sql, values)).rows[0];
  }

  /** Compares the stored credentials with this instance's, once; a failure is retried next call. */
  checked(): Promise<Map<string, Buffer>> {
    return (this.#salts ??= this.#compare().catch((error: unknown) => {
      this.#salts = undefined;
      throw error;
    }));
  }

  #compare(): Promise<Map<string, Buffer>> {
    return this.db.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock($1)', [CREDENTIALS_LOCK]);
      const salts = new Map<string, Buffer>();
      for (const { id, password, ...account } of this.credentials) {
        const email = normalizeEmail(account.email);
        const { rows } = await query<PasswordHash & { email: string }>(
          'SELECT email, salt, password_hash AS key, cost FROM credentials WHERE user_id = $1',
          [id],
        );
        let stored = rows[0];
        if (stored?.email !== email || !(await matchesHash(password, stored))) {
          stored = { email, ...(await newPasswordHash(password, this.passwordHashCost)) };
          await query(STORE_CREDENTIAL, [id, email, stored.salt, stored.key, stored.cost]);
          await query('DELETE FROM sessions WHERE user_id = $1', [id]);
        }
        salts.set(id, stored.salt);
      }
      return salts;
    });
  }
}
