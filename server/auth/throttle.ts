import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../shared/database.js';
import { normalizeEmail } from './accounts.js';

/** The limits of login throttling; docs/security.md describes the scheme. */
export interface ThrottleLimits {
  /** Failures of one account from one client address (or one trusted device) before that pair waits. */
  perPair: number;
  pairWindowMs: number;
  /** Failures of one account from untrusted clients, all addresses together, before such clients wait. */
  perAccount: number;
  accountWindowMs: number;
}

export const THROTTLE_LIMITS: ThrottleLimits = { perPair: 5, pairWindowMs: 15 * 60 * 1000, perAccount: 100, accountWindowMs: 60 * 60 * 1000 };

/**
 * Where failures are counted: this process's memory (FailureLog) or PostgreSQL, shared by every
 * instance (PostgresFailureCounts). Each counts failures per key within a sliding window, with a
 * limit past which a key waits.
 */
export interface FailureCounts {
  /** Seconds until `key` may try again, or undefined when it is not blocked. */
  retryAfterSeconds(key: string): number | undefined | Promise<number | undefined>;
  /** Failures of `key` within the window. */
  count(key: string): number | Promise<number>;
  record(key: string): void | Promise<void>;
  reset(key: string): void | Promise<void>;
}

/** Seconds until the `limit`-th most recent of `times` leaves the window, or undefined when fewer failed. */
function waitFor(times: number[], limit: number, windowMs: number, now: number): number | undefined {
  if (times.length < limit) return undefined;
  const freedAt = times[times.length - limit]! + windowMs;
  return Math.max(1, Math.ceil((freedAt - now) / 1000));
}

/** Keys a log tracks at most: each holds an email (≤ 254 characters), an address, and a few timestamps. */
const MAX_TRACKED_KEYS = 10_000;
/** How far an eviction looks for a key that is not blocked before it gives up tracking the newcomer. */
const EVICTION_SCAN = 64;

/**
 * Failed attempts per key within a sliding window, each key keeping at most `limit` timestamps.
 * The Map is kept in order of each key's latest failure, so keys whose failures have all left
 * the window are swept from its head. Past `maxKeys`, the least recently failing key that is not
 * blocked makes room; a blocked key is never forgotten early, and when none near the head can go,
 * the newcomer is not tracked (the other limits still hold for it).
 */
export class FailureLog implements FailureCounts {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly maxKeys = MAX_TRACKED_KEYS,
  ) {}

  /** Seconds until `key` may try again, or undefined when it is not blocked. */
  retryAfterSeconds(key: string): number | undefined {
    return waitFor(this.#recent(key), this.limit, this.windowMs, this.now());
  }

  /** Failures of `key` within the window. */
  count(key: string): number {
    return this.#recent(key).length;
  }

  record(key: string): void {
    const known = this.#failures.has(key);
    this.#sweep();
    if (!known && this.#failures.size >= this.maxKeys && !this.#makeRoom()) return;
    const recent = [...this.#recent(key), this.now()].slice(-this.limit);
    this.#failures.delete(key);
    this.#failures.set(key, recent);
  }

  reset(key: string): void {
    this.#failures.delete(key);
  }

  get size(): number {
    return this.#failures.size;
  }

  #recent(key: string): number[] {
    const since = this.now() - this.windowMs;
    return (this.#failures.get(key) ?? []).filter((at) => at > since);
  }

  #makeRoom(): boolean {
    let scanned = 0;
    for (const key of this.#failures.keys()) {
      if (++scanned > EVICTION_SCAN) return false;
      if (this.retryAfterSeconds(key) === undefined) {
        this.#failures.delete(key);
        return true;
      }
    }
    return false;
  }

  #sweep(): void {
    const since = this.now() - this.windowMs;
    for (const [key, failures] of this.#failures) {
      if (failures[failures.length - 1]! > since) break;
      this.#failures.delete(key);
    }
  }
}

/**
 * Failures counted in PostgreSQL (the login service's schema), so that every instance on the
 * database sees the same counts, in the database's time. `sweep` deletes rows past the window.
 */
export class PostgresFailureCounts implements FailureCounts {
  constructor(
    private readonly db: Database,
    private readonly scope: string,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  async retryAfterSeconds(key: string): Promise<number | undefined> {
    // The `limit`-th most recent failure within the window, if there are that many: the key waits until it leaves the window.
    const { rows } = await this.db.query<{ wait: number }>(
      `SELECT greatest(1, ceil(extract(epoch FROM at + make_interval(secs => $2) - now())))::int AS wait
       FROM login_failures WHERE key = $1 AND at > now() - make_interval(secs => $2)
       ORDER BY at DESC OFFSET $3 LIMIT 1`,
      [this.#key(key), this.windowMs / 1000, this.limit - 1],
    );
    return rows[0]?.wait;
  }

  async count(key: string): Promise<number> {
    const { rows } = await this.db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM login_failures WHERE key = $1 AND at > now() - make_interval(secs => $2)',
      [this.#key(key), this.windowMs / 1000],
    );
    return rows[0]!.count;
  }

  async record(key: string): Promise<void> {
    await this.db.query('INSERT INTO login_failures (key) VALUES ($1)', [this.#key(key)]);
  }

  async reset(key: string): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE key = $1', [this.#key(key)]);
  }

  /** Deletes the failures that have left the window. */
  async sweep(): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE key LIKE $1 AND at <= now() - make_interval(secs => $2)', [`${this.scope}:%`, this.windowMs / 1000]);
  }

  #key(key: string): string {
    return `${this.scope}:${key}`;
  }
}

/** Who is trying: the account's email, the client's address, and the trusted device it proved, if any. */
export interface Attempt {
  email: string;
  address: string;
  device?: string;
}

/** Attempts that may wait for one key before more are refused. */
const MAX_WAITING = 32;

/**
 * Throttling that protects accounts without handing attackers a lockout:
 * - each account and client address (or trusted device) pair may fail `perPair` times per
 *   window; past it, that pair waits, and nobody else does;
 * - each account may fail `perAccount` times per window from clients it does not trust; past
 *   it, such clients wait, so guessing from many addresses stays bounded, while a browser that
 *   has logged in to the account before (it holds a device cookie for it) still gets in;
 * - an attempt counts as a failure only once its password was checked and found wrong, so correct
 *   logins are never refused for arriving together; attempts that could pass a limit if they all
 *   failed wait for the ones in flight instead of being checked at the same time.
 */
export class LoginThrottle {
  readonly #inFlight = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  private constructor(
    private readonly pairs: FailureCounts,
    private readonly accounts: FailureCounts,
    private readonly limits: ThrottleLimits,
    /** Deletes what the counts no longer need (PostgreSQL's rows; a FailureLog sweeps itself). */
    readonly sweep: () => Promise<void> = async () => undefined,
  ) {}

  /** Counts kept in this process: the default, and the spec's single process. */
  static inMemory(now: () => number, limits = THROTTLE_LIMITS): LoginThrottle {
    return new LoginThrottle(new FailureLog(limits.perPair, limits.pairWindowMs, now), new FailureLog(limits.perAccount, limits.accountWindowMs, now), limits);
  }

  /** Counts shared by every instance on the database. */
  static inPostgres(db: Database, limits = THROTTLE_LIMITS): LoginThrottle {
    const pairs = new PostgresFailureCounts(db, 'pair', limits.perPair, limits.pairWindowMs);
    const accounts = new PostgresFailureCounts(db, 'account', limits.perAccount, limits.accountWindowMs);
    return new LoginThrottle(pairs, accounts, limits, async () => {
      await pairs.sweep();
      await accounts.sweep();
    });
  }

  /**
   * Admits the attempt (resolves undefined; the caller then reports it with `settle`), or says
   * how many seconds it must wait.
   */
  async admit(attempt: Attempt): Promise<number | undefined> {
    const keys = this.#keys(attempt);
    for (;;) {
      const wait = (await this.pairs.retryAfterSeconds(keys.pair)) ?? (keys.account === undefined ? undefined : await this.accounts.retryAfterSeconds(keys.account));
      if (wait !== undefined) return wait;
      const full =
        (await this.pairs.count(keys.pair)) + this.#flying(keys.pair) >= this.limits.perPair
          ? keys.pair
          : keys.account !== undefined && (await this.accounts.count(keys.account)) + this.#flying(keys.account) >= this.limits.perAccount
            ? keys.account
            : undefined;
      if (full === undefined) break;
      const queue = this.#waiting.get(full) ?? [];
      if (queue.length >= MAX_WAITING) return 1;
      this.#waiting.set(full, queue);
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    for (const key of [keys.pair, keys.account]) if (key !== undefined) this.#inFlight.set(key, this.#flying(key) + 1);
    return undefined;
  }

  /** The admitted attempt's outcome: a wrong password counts, a right one clears its pair, an attempt never checked neither. */
  async settle(attempt: Attempt, outcome: 'succeeded' | 'failed' | 'unchecked'): Promise<void> {
    const keys = this.#keys(attempt);
    try {
      if (outcome === 'succeeded') await this.pairs.reset(keys.pair);
      if (outcome === 'failed') {
        await this.pairs.record(keys.pair);
        if (keys.account !== undefined) await this.accounts.record(keys.account);
      }
    } finally {
      this.#release(keys);
    }
  }

  #release(keys: { pair: string; account?: string }): void {
    for (const key of [keys.pair, keys.account]) {
      if (key === undefined) continue;
      const flying = this.#flying(key) - 1;
      if (flying > 0) this.#inFlight.set(key, flying);
      else this.#inFlight.delete(key);
      // Every waiter looks again: some are now refused, one may go, the rest wait on.
      const queue = this.#waiting.get(key);
      this.#waiting.delete(key);
      queue?.forEach((wake) => wake());
    }
  }

  #flying(key: string): number {
    return this.#inFlight.get(key) ?? 0;
  }

  /** The pair's key, and the account's when the client is not a trusted device of it. */
  #keys({ email, address, device }: Attempt): { pair: string; account?: string } {
    const account = normalizeEmail(email);
    return { pair: `${account}\n${device ? `device ${device}` : address}`, account: device ? undefined : account };
  }
}

/**
 * Device cookies: a browser that logged in to an account gets a token naming it, signed with a
 * key of the service, which it shows at its next logins. It proves the browser was the
 * account's before; it grants nothing by itself. The key is this process's own, or, shared by
 * every instance, kept in PostgreSQL.
 */
export class DeviceTrust {
  #key: Promise<Buffer> | undefined;

  private constructor(private readonly loadKey: () => Promise<Buffer>) {}

  static inMemory(): DeviceTrust {
    const key = randomBytes(32);
    return new DeviceTrust(async () => key);
  }

  /** The key every instance on the database signs with: made by the first that needs it. */
  static inPostgres(db: Database): DeviceTrust {
    return new DeviceTrust(async () => {
      await db.query('INSERT INTO device_key (key) VALUES ($1) ON CONFLICT DO NOTHING', [randomBytes(32)]);
      return (await db.query<{ key: Buffer }>('SELECT key FROM device_key')).rows[0]!.key;
    });
  }

  /** The key, loaded once; a load that failed (the database was away) is tried again next time. */
  #signingKey(): Promise<Buffer> {
    this.#key ??= this.loadKey().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    return this.#key;
  }

  async issue(userId: string): Promise<string> {
    const nonce = randomBytes(12).toString('base64url');
    return `${userId}.${nonce}.${await this.#sign(userId, nonce)}`;
  }

  /** The device's id from the first of `tokens` issued for `userId`; otherwise undefined. */
  async recognize(tokens: string[], userId: string): Promise<string | undefined> {
    for (const token of tokens) {
      const device = await this.#verify(token, userId);
      if (device) return device;
    }
    return undefined;
  }

  async #verify(token: string, userId: string): Promise<string | undefined> {
    const [id, nonce, signature] = token.split('.');
    if (id !== userId || !nonce || !signature) return undefined;
    const expected = Buffer.from(await this.#sign(id, nonce));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : undefined;
  }

  async #sign(userId: string, nonce: string): Promise<string> {
    return createHmac('sha256', await this.#signingKey()).update(`${userId}.${nonce}`).digest('base64url');
  }
}
