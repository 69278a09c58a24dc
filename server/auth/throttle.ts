import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { normalizeEmail } from './accounts.js';

/** The limits of login throttling; the README's security model describes the scheme. */
export interface ThrottleLimits {
  /** Failures of one account from one client address (or one trusted device) before that pair waits. */
  perPair: number;
  pairWindowMs: number;
  /** Failures of one account from untrusted clients, all addresses together, before such clients wait. */
  perAccount: number;
  accountWindowMs: number;
}

export const THROTTLE_LIMITS: ThrottleLimits = { perPair: 5, pairWindowMs: 15 * 60 * 1000, perAccount: 100, accountWindowMs: 60 * 60 * 1000 };

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
export class FailureLog {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly maxKeys = MAX_TRACKED_KEYS,
  ) {}

  /** Seconds until `key` may try again, or undefined when it is not blocked. */
  retryAfterSeconds(key: string): number | undefined {
    const recent = this.#recent(key);
    if (recent.length < this.limit) return undefined;
    const freedAt = recent[recent.length - this.limit]! + this.windowMs;
    return Math.max(1, Math.ceil((freedAt - this.now()) / 1000));
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
  readonly #pairs: FailureLog;
  readonly #accounts: FailureLog;
  readonly #inFlight = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(
    now: () => number,
    private readonly limits: ThrottleLimits = THROTTLE_LIMITS,
  ) {
    this.#pairs = new FailureLog(limits.perPair, limits.pairWindowMs, now);
    this.#accounts = new FailureLog(limits.perAccount, limits.accountWindowMs, now);
  }

  /**
   * Admits the attempt (resolves undefined; the caller then reports it with `settle`), or says
   * how many seconds it must wait.
   */
  async admit(attempt: Attempt): Promise<number | undefined> {
    const keys = this.#keys(attempt);
    for (;;) {
      const wait = this.#pairs.retryAfterSeconds(keys.pair) ?? (keys.account === undefined ? undefined : this.#accounts.retryAfterSeconds(keys.account));
      if (wait !== undefined) return wait;
      const full =
        this.#pairs.count(keys.pair) + this.#flying(keys.pair) >= this.limits.perPair
          ? keys.pair
          : keys.account !== undefined && this.#accounts.count(keys.account) + this.#flying(keys.account) >= this.limits.perAccount
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
  settle(attempt: Attempt, outcome: 'succeeded' | 'failed' | 'unchecked'): void {
    const keys = this.#keys(attempt);
    if (outcome === 'succeeded') this.#pairs.reset(keys.pair);
    if (outcome === 'failed') {
      this.#pairs.record(keys.pair);
      if (keys.account !== undefined) this.#accounts.record(keys.account);
    }
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
 * key of this process, which it shows at its next logins. It proves the browser was the
 * account's before; it grants nothing by itself.
 */
export class DeviceTrust {
  readonly #key = randomBytes(32);

  issue(userId: string): string {
    const nonce = randomBytes(12).toString('base64url');
    return `${userId}.${nonce}.${this.#sign(userId, nonce)}`;
  }

  /** The device's id when `token` was issued by this process for `userId`; otherwise undefined. */
  verify(token: string | undefined, userId: string): string | undefined {
    const [id, nonce, signature] = token?.split('.') ?? [];
    if (id !== userId || !nonce || !signature) return undefined;
    const expected = Buffer.from(this.#sign(id, nonce));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : undefined;
  }

  #sign(userId: string, nonce: string): string {
    return createHmac('sha256', this.#key).update(`${userId}.${nonce}`).digest('base64url');
  }
}
