import type { Database } from '../db/pool.js';

/** How an admitted login attempt ended: only a checked wrong password counts as a failure. */
export type Outcome = 'succeeded' | 'failed' | 'unchecked';

/**
 * The login limits, by what they count (docs/security.md, Login throttling): which one refused an
 * attempt.
 */
export type LoginLimit = 'attempts at once' | 'address' | 'pair' | 'account';

/**
 * A limit's answer to an attempt: wait that many seconds (and which limit says so), or go on and
 * report how it ended.
 */
export type Admission =
  { retryAfterSeconds: number; limit: LoginLimit } | { settle(outcome: Outcome): Promise<void> };

/** What a key's failures within its sliding window say. */
export interface FailureState {
  /** Failures within the window, counted up to the limit. */
  failures: number;
  /** Seconds until the key may try again, when it has reached the limit. */
  retryAfterSeconds?: number;
}

/**
 * Failed logins counted per key within a sliding window, with a limit past which the key waits
 * until its oldest counted failure leaves the window: in this process's memory (FailureLog) or
 * in PostgreSQL, shared by every instance (PostgresFailureCounts).
 */
export interface FailureCounts {
  state(key: string): FailureState | Promise<FailureState>;
  /**
   * Seconds until a key the table does not hold yet can be taken in, `alsoComing` newcomers
   * being on their way already; undefined when there is room (or the key is held).
   */
  waitForRoom(key: string, alsoComing: number): number | undefined | Promise<number | undefined>;
  record(key: string): void | Promise<void>;
}

/** Counts that can be cleared: a pair's by a success, an account's by an administrator. */
export interface ResettableFailureCounts extends FailureCounts {
  reset(key: string): void | Promise<void>;
  /** The state of every key that begins with `prefix` and has failures in its window. */
  statesFrom(prefix: string): Map<string, FailureState> | Promise<Map<string, FailureState>>;
  /** Forgets every key that begins with `prefix`: the states they had (see statesFrom). */
  resetFrom(prefix: string): Map<string, FailureState> | Promise<Map<string, FailureState>>;
}

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

/**
 * A key's state from its failures counted up to `limit`, and the seconds until the oldest of them
 * leaves the window.
 */
const stateOf = (failures: number, wait: number, limit: number): FailureState =>
  failures < limit ? { failures } : { failures, retryAfterSeconds: wait };

/**
 * Failures per key in this process, each key keeping at most `limit` timestamps. The Map is kept
 * in order of each key's latest failure, so keys whose failures have all left the window are
 * swept from its head. A key is never forgotten before its window ends: past `maxKeys`, newcomers
 * wait (see waitForRoom) until the key at the head leaves, rather than pushing out someone else's.
 */
export class FailureLog implements ResettableFailureCounts {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly maxKeys = Infinity,
  ) {}

  state(key: string): FailureState {
    const recent = this.#recent(key);
    if (recent.length < this.limit) return { failures: recent.length };
    return {
      failures: recent.length,
      retryAfterSeconds: secondsUntil(
        recent[recent.length - this.limit]! + this.windowMs,
        this.now(),
      ),
    };
  }

  waitForRoom(key: string, alsoComing: number): number | undefined {
    this.#sweep();
    if (this.#failures.has(key) || this.#failures.size + alsoComing < this.maxKeys)
      return undefined;
    const [oldest] = this.#failures.values();
    // Full of newcomers still on their way: one of them will have answered within a second.
    return oldest ? secondsUntil(oldest[oldest.length - 1]! + this.windowMs, this.now()) : 1;
  }

  record(key: string): void {
    this.#sweep();
    const recent = [...this.#recent(key), this.now()].slice(-this.limit);
    this.#failures.delete(key);
    this.#failures.set(key, recent);
  }

  reset(key: string): void {
    this.#failures.delete(key);
  }

  statesFrom(prefix: string): Map<string, FailureState> {
    const states = new Map<string, FailureState>();
    for (const key of this.#failures.keys()) {
      if (!key.startsWith(prefix)) continue;
      const state = this.state(key);
      if (state.failures > 0) states.set(key, state);
    }
    return states;
  }

  resetFrom(prefix: string): Map<string, FailureState> {
    const states = this.statesFrom(prefix);
    for (const key of [...this.#failures.keys()])
      if (key.startsWith(prefix)) this.#failures.delete(key);
    return states;
  }

  get size(): number {
    return this.#failures.size;
  }

  #recent(key: string): number[] {
    const since = this.now() - this.windowMs;
    return (this.#failures.get(key) ?? []).filter((at) => at > since);
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
 * Seconds until the oldest of the failures counted (`at`, within the window of `$2` seconds) leaves
 * the window.
 */
const WAIT =
  'greatest(1, ceil(extract(epoch FROM min(at) + make_interval(secs => $2) - now())))::int';

/**
 * Each key of `source` (rows of `key` and `at`) that matches the pattern `$1` and has failures in
 * the window of `$2` seconds: its failures, counted up to the limit `$3`, and the wait of the
 * oldest of those.
 */
const statesOfKeys = (source: string) => `SELECT key, count(*)::int AS failures, ${WAIT} AS wait
  FROM (SELECT key, at, row_number() OVER (PARTITION BY key ORDER BY at DESC) AS rank FROM ${source} WHERE key LIKE $1 AND at > now() - make_interval(secs => $2)) AS recent
  WHERE rank <= $3 GROUP BY key`;

/**
 * Failures counted in PostgreSQL (table `login_failures` of the login service's schema), so that
 * every instance on the database sees the same counts, in the database's time. Each key's state
 * is one indexed statement; `sweep` deletes rows past the window. Rows are bounded by the failures
 * the password checks of every instance can find in one window, so no key is ever turned away.
 */
export class PostgresFailureCounts implements ResettableFailureCounts {
  constructor(
    private readonly db: Database,
    private readonly scope: string,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  async state(key: string): Promise<FailureState> {
    // The `limit` most recent failures within the window: when there are that many, the key waits
    // until the oldest of them leaves it.
    const { rows } = await this.db.query<{ failures: number; wait: number }>(
      `SELECT count(*)::int AS failures, ${WAIT} AS wait
       FROM (SELECT at FROM login_failures WHERE key = $1 AND at > now() - make_interval(secs => $2) ORDER BY at DESC LIMIT $3) AS recent`,
      [this.#key(key), this.windowMs / 1000, this.limit],
    );
    const { failures, wait } = rows[0]!;
    return stateOf(failures, wait, this.limit);
  }

  async statesFrom(prefix: string): Promise<Map<string, FailureState>> {
    return this.#states(statesOfKeys('login_failures'), prefix);
  }

  async resetFrom(prefix: string): Promise<Map<string, FailureState>> {
    return this.#states(
      `WITH gone AS (DELETE FROM login_failures WHERE key LIKE $1 RETURNING key, at) ${statesOfKeys('gone')}`,
      prefix,
    );
  }

  async #states(statement: string, prefix: string): Promise<Map<string, FailureState>> {
    const pattern = `${this.#key(prefix).replace(/[\\%_]/g, '\\$&')}%`;
    const { rows } = await this.db.query<{ key: string; failures: number; wait: number }>(
      statement,
      [pattern, this.windowMs / 1000, this.limit],
    );
    return new Map(
      rows.map(({ key, failures, wait }) => [
        key.slice(this.scope.length + 1),
        stateOf(failures, wait, this.limit),
      ]),
    );
  }

  waitForRoom(): undefined {
    return undefined;
  }

  async record(key: string): Promise<void> {
    await this.db.query('INSERT INTO login_failures (key) VALUES ($1)', [this.#key(key)]);
  }

  async reset(key: string): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE key = $1', [this.#key(key)]);
  }

  /** Deletes the failures that have left the window. */
  async sweep(): Promise<void> {
    await this.db.query(
      'DELETE FROM login_failures WHERE key LIKE $1 AND at <= now() - make_interval(secs => $2)',
      [`${this.scope}:%`, this.windowMs / 1000],
    );
  }

  #key(key: string): string {
    return `${this.scope}:${key}`;
  }
}

/**
 * Counts in PostgreSQL, with the keys this process has seen blocked remembered until their wait
 * ends: a key that keeps trying while it waits then costs no statement. Right only for counts
 * nobody resets (the address budget's): failures only ever leave by age, so no instance can end a
 * wait early. The keys remembered are those blocked within one window, and `sweep` drops those
 * whose wait has ended.
 */
export class PostgresCountsRememberingBlocks implements FailureCounts {
  readonly #blockedUntil = new Map<string, number>();

  constructor(
    private readonly counts: PostgresFailureCounts,
    private readonly limit: number,
    private readonly now: () => number,
  ) {}

  async state(key: string): Promise<FailureState> {
    const until = this.#blockedUntil.get(key);
    if (until !== undefined && until > this.now())
      return { failures: this.limit, retryAfterSeconds: secondsUntil(until, this.now()) };
    const state = await this.counts.state(key);
    if (state.retryAfterSeconds === undefined) this.#blockedUntil.delete(key);
    else this.#blockedUntil.set(key, this.now() + state.retryAfterSeconds * 1000);
    return state;
  }

  waitForRoom(): undefined {
    return undefined;
  }

  record(key: string): Promise<void> {
    return this.counts.record(key);
  }

  async sweep(): Promise<void> {
    const now = this.now();
    for (const [key, until] of this.#blockedUntil) if (until <= now) this.#blockedUntil.delete(key);
    await this.counts.sweep();
  }
}
