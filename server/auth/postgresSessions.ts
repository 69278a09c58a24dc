import { createHash, randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Database } from '../db/pool.js';
import type { User } from './accounts.js';
import {
  cappedSessions,
  type Client,
  type EndedSession,
  type SessionCap,
  type SessionInfo,
  type SessionLimits,
  type SessionStore,
} from './sessions.js';

/** Serializes logins across instances, so that the caps hold however many log in at once. */
const LOGIN_LOCK = 0x5e55;
/** Held by the one instance sweeping expired sessions. */
const SWEEP_LOCK = 0x5e56;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const hashOf = (token: string) => createHash('sha256').update(token).digest();

/** A time as JavaScript's toISOString writes it, as the memory store lists it. */
export const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The most lookups one statement carries. */
const LOOKUPS_PER_STATEMENT = 256;

/**
 * The live sessions of a batch of token hashes, each with its place in the batch (`at`, from 1),
 * and whether its last-seen time is over a minute old: the time is refreshed at most once a
 * minute, so lookups almost never write. A session of an older credential generation than its
 * account's is not live.
 */
const LOOKUP = {
  name: 'sessions.lookup',
  text: `SELECT id, user_id AS "userId", at::int, last_seen_at < now() - interval '1 minute' AS stale
    FROM unnest($1::bytea[]) WITH ORDINALITY AS asked (token_hash, at) JOIN sessions USING (token_hash) JOIN credentials USING (user_id, generation)
    WHERE expires_at > now()`,
};

/**
 * A session within the caps, in one round trip: the function (see its migrations) takes
 * LOGIN_LOCK, ends the oldest past the caps, inserts, and names the owner of each live session a
 * cap ended.
 */
const CREATE = {
  name: 'sessions.create',
  text: 'SELECT ended_owner AS "userId", cap FROM create_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
};

const INFO = `id, user_id AS "userId", address, user_agent AS "userAgent",
  ${iso('created_at')} AS "createdAt", ${iso('last_seen_at')} AS "lastSeenAt", ${iso('expires_at')} AS "expiresAt"`;

/**
 * Sessions in the login service's own schema, shared by every instance on the database. Expiry
 * is compared in the database's time; each lookup is one indexed statement; an ending takes
 * effect at once everywhere, since nothing is cached. Lookups wait until this instance has
 * compared the stored credentials with its own (`credentialsChecked`), so that the sessions of a
 * changed password are refused from the first request after a restart.
 */
export class PostgresSessionStore implements SessionStore {
  #credentialsChecked = false;

  constructor(
    private readonly db: Database,
    private readonly limits: SessionLimits,
    private readonly credentialsChecked: () => Promise<unknown>,
  ) {}

  async create(user: User, { address, userAgent }: Client, generation: number) {
    const token = randomUUID();
    const { rows } = await this.db.query<{ userId: string; cap: SessionCap }>(CREATE, [
      randomUUID(),
      hashOf(token),
      user.id,
      this.limits.ttlSeconds,
      address,
      userAgent,
      generation,
      this.limits.maxPerUser,
      this.limits.max,
      LOGIN_LOCK,
    ]);
    return { token, capped: cappedSessions(rows) };
  }

  find(token: string) {
    return this.#credentialsChecked ? this.#lookups.load(token) : this.#findOnceChecked(token);
  }

  async #findOnceChecked(token: string) {
    await this.credentialsChecked();
    this.#credentialsChecked = true;
    return this.#lookups.load(token);
  }

  /**
   * The lookups of requests that arrive together (in one turn of the event loop) go to the
   * database as one prepared statement: under load, a round trip for many requests instead of one
   * each, and no parsing or planning, for PostgreSQL and for this process. Nothing is kept
   * between statements, so an ending holds for every lookup sent after it.
   */
  readonly #lookups = new DataLoader<string, { id: string; userId: string } | undefined>(
    async (tokens) => {
      const { rows } = await this.db.query<{
        id: string;
        userId: string;
        at: number;
        stale: boolean;
      }>(LOOKUP, [tokens.map(hashOf)]);
      const found: ({ id: string; userId: string } | undefined)[] = tokens.map(() => undefined);
      for (const { id, userId, at } of rows) found[at - 1] = { id, userId };
      const stale = rows.filter((row) => row.stale).map(({ id }) => id);
      // Only what administrators see depends on it, so the request does not wait, and a refresh
      // that fails is tried again by the next lookup.
      if (stale.length > 0)
        this.db
          .query('UPDATE sessions SET last_seen_at = now() WHERE id = ANY($1::uuid[])', [stale])
          .catch(() => undefined);
      return found;
    },
    {
      cache: false,
      maxBatchSize: LOOKUPS_PER_STATEMENT,
      batchScheduleFn: (send) => setImmediate(send),
    },
  );

  async remove(token: string): Promise<EndedSession | undefined> {
    const { rows } = await this.db.query<EndedSession>(
      'WITH ended AS (DELETE FROM sessions WHERE token_hash = $1 RETURNING id, user_id, expires_at) SELECT id, user_id AS "userId" FROM ended WHERE expires_at > now()',
      [hashOf(token)],
    );
    return rows[0];
  }

  async list(userId?: string): Promise<SessionInfo[]> {
    const { rows } = await this.db.query<SessionInfo>(
      `SELECT ${INFO} FROM sessions JOIN credentials USING (user_id, generation) WHERE expires_at > now() AND ($1::text IS NULL OR user_id = $1) ORDER BY created_at`,
      [userId ?? null],
    );
    return rows;
  }

  async count(): Promise<number> {
    const { rows } = await this.db.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM sessions JOIN credentials USING (user_id, generation) WHERE expires_at > now()',
    );
    return rows[0]!.live;
  }

  async end(id: string, userId?: string): Promise<EndedSession | undefined> {
    if (!UUID.test(id)) return undefined;
    const { rows } = await this.db.query<EndedSession>(
      'DELETE FROM sessions WHERE id = $1 AND ($2::text IS NULL OR user_id = $2) RETURNING id, user_id AS "userId"',
      [id, userId ?? null],
    );
    return rows[0];
  }

  async endAllOf(userId: string, except?: string): Promise<number> {
    const { rowCount } = await this.db.query(
      'DELETE FROM sessions WHERE user_id = $1 AND id IS DISTINCT FROM $2::uuid',
      [userId, except ?? null],
    );
    return rowCount ?? 0;
  }

  /**
   * Deletes the expired rows, unless another instance is doing so (its lock is held): how many.
   * Lookups refuse expired rows by themselves; this only keeps the table small.
   */
  async sweep(): Promise<number> {
    return this.db.transaction(async (query) => {
      const { rows } = await query<{ locked: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1) AS locked',
        [SWEEP_LOCK],
      );
      if (!rows[0]!.locked) return 0;
      return (await query('DELETE FROM sessions WHERE expires_at <= now()')).rowCount ?? 0;
    });
  }
}
