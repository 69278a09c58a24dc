import { normalizeEmail } from './accounts.js';

const WINDOW_MS = 15 * 60 * 1000;
const MAX_FAILURES_PER_EMAIL = 10;
const MAX_FAILURES_PER_ADDRESS = 30;
/** Keys tracked per log; beyond it the least recently failing key is forgotten, bounding memory. */
const MAX_TRACKED_KEYS = 10_000;

/**
 * Failed attempts per key within a sliding window. Each key keeps at most `limit` timestamps,
 * and the Map is kept in order of each key's latest failure, so keys whose failures have all
 * left the window are swept from its head.
 */
export class FailureLog {
  readonly #failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number,
    private readonly maxKeys = MAX_TRACKED_KEYS,
  ) {}

  /** Seconds until `key` may try again, or undefined when it is not blocked. */
  retryAfterSeconds(key: string): number | undefined {
    const recent = this.#recent(key);
    if (recent.length < this.limit) return undefined;
    const freedAt = recent[recent.length - this.limit] + WINDOW_MS;
    return Math.max(1, Math.ceil((freedAt - this.now()) / 1000));
  }

  record(key: string): void {
    const recent = [...this.#recent(key), this.now()].slice(-this.limit);
    this.#failures.delete(key);
    this.#failures.set(key, recent);
    this.#sweep();
    for (const oldest of this.#failures.keys()) {
      if (this.#failures.size <= this.maxKeys) break;
      this.#failures.delete(oldest);
    }
  }

  /** Takes back the latest failure: an attempt counted in advance turned out right. */
  retract(key: string): void {
    const failures = this.#failures.get(key);
    failures?.pop();
    if (failures?.length === 0) this.#failures.delete(key);
  }

  reset(key: string): void {
    this.#failures.delete(key);
  }

  get size(): number {
    return this.#failures.size;
  }

  #recent(key: string): number[] {
    const since = this.now() - WINDOW_MS;
    return (this.#failures.get(key) ?? []).filter((at) => at > since);
  }

  #sweep(): void {
    const since = this.now() - WINDOW_MS;
    for (const [key, failures] of this.#failures) {
      if (failures[failures.length - 1] > since) break;
      this.#failures.delete(key);
    }
  }
}

/**
 * More than 10 failed logins for one email, or 30 from one client address, within 15 minutes
 * block further attempts (even with the right password) until the window frees a slot.
 *
 * An admitted attempt counts as a failure at once, before its password is checked, so that
 * parallel requests cannot all slip under the limit while scrypt runs; a success takes it back
 * and clears that email's failures. The address keeps its count, so one client cannot reset its
 * budget by logging into an account it owns.
 */
export class LoginThrottle {
  readonly #byEmail: FailureLog;
  readonly #byAddress: FailureLog;

  constructor(now: () => number) {
    this.#byEmail = new FailureLog(MAX_FAILURES_PER_EMAIL, now);
    this.#byAddress = new FailureLog(MAX_FAILURES_PER_ADDRESS, now);
  }

  /** The seconds to wait when blocked; otherwise undefined, the attempt counted as failed. */
  admit(email: string, address: string): number | undefined {
    const key = normalizeEmail(email);
    const waits = [this.#byEmail.retryAfterSeconds(key), this.#byAddress.retryAfterSeconds(address)];
    const blocked = waits.filter((wait): wait is number => wait !== undefined);
    if (blocked.length) return Math.max(...blocked);
    this.#byEmail.record(key);
    this.#byAddress.record(address);
    return undefined;
  }

  succeeded(email: string, address: string): void {
    this.#byEmail.reset(normalizeEmail(email));
    this.#byAddress.retract(address);
  }
}
