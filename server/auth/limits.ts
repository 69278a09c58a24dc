import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Database } from '../db/pool.js';

/** Failed logins each key may spend per window (docs/security.md, Login limits). */
export const LOGIN_LIMITS = {
  /** One account from one client address, or from one trusted device. */
  pair: { points: 5, duration: 15 * 60 },
  /** One client address, every account and unknown email together. */
  address: { points: 50, duration: 15 * 60 },
  /** One account from untrusted clients, every address together. */
  account: { points: 100, duration: 60 * 60 },
};

export type LimitName = keyof typeof LOGIN_LIMITS;

/** The keys an attempt spends: the limits that apply to it. */
export type LimitKeys = Partial<Record<LimitName, string>>;

export interface Refusal {
  /** The limit spent, or `waiting`: the address has too many checks waiting already. */
  limit: LimitName | 'waiting';
  retryAfterSeconds: number;
}

/** How a checked attempt ended: only a wrong password or an unknown email is spent. */
export type Outcome = 'succeeded' | 'failed' | 'unchecked';

/** A limit's count for a key as the admin pages show it. */
export interface LimitState {
  failures: number;
  retryAfterSeconds: number | null;
}

const secondsOf = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Login limits on rate-limiter-flexible, in this process or in PostgreSQL (table `login_limits`)
 * for every instance. An attempt spends a point of each of its keys before its password is
 * checked and gets it back unless the check failed: attempts checked at the same time can never
 * pass a limit together, and a correct login costs nothing.
 */
export class LoginLimits {
  readonly #limiters: Record<LimitName, RateLimiterAbstract>;

  constructor(db?: Database) {
    const limiter = (name: LimitName) => {
      const options = { keyPrefix: name, ...LOGIN_LIMITS[name] };
      if (!db) return new RateLimiterMemory(options);
      // The table is the migration's; its expired rows are swept by the library's own timer.
      return new RateLimiterPostgres({
        ...options,
        storeClient: db,
        storeType: 'pool',
        tableName: 'login_limits',
        tableCreated: true,
      });
    };
    this.#limiters = {
      pair: limiter('pair'),
      address: limiter('address'),
      account: limiter('account'),
    };
  }

  /** The first limit the keys have spent, without spending anything: cheap early refusals. */
  async refusal(keys: LimitKeys): Promise<Refusal | undefined> {
    const entries = this.#entries(keys);
    const states = await Promise.all(entries.map(([limit, key]) => this.state(limit, key)));
    const index = states.findIndex(({ retryAfterSeconds }) => retryAfterSeconds !== null);
    if (index < 0) return undefined;
    return { limit: entries[index]![0], retryAfterSeconds: states[index]!.retryAfterSeconds! };
  }

  /** Spends a point of each key; when one is spent already, gives every point back and refuses. */
  async spend(keys: LimitKeys): Promise<Refusal | undefined> {
    const entries = this.#entries(keys);
    const spent = await Promise.allSettled(
      entries.map(([limit, key]) => this.#limiters[limit].consume(key)),
    );
    const refusals = spent.flatMap((result, index) => {
      if (result.status === 'fulfilled') return [];
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      return [
        { limit: entries[index]![0], retryAfterSeconds: secondsOf(result.reason.msBeforeNext) },
      ];
    });
    if (refusals.length === 0) return undefined;
    await this.#giveBack(entries);
    return refusals.reduce((longest, refusal) =>
      refusal.retryAfterSeconds > longest.retryAfterSeconds ? refusal : longest,
    );
  }

  /** What the check of a spending attempt found: a success also clears its pair. */
  async settle(keys: LimitKeys, outcome: Outcome): Promise<void> {
    if (outcome === 'failed') return;
    const { pair, ...rest } = keys;
    await Promise.all([
      this.#giveBack(this.#entries(rest)),
      pair === undefined
        ? undefined
        : outcome === 'succeeded'
          ? this.#limiters.pair.delete(pair)
          : this.#limiters.pair.reward(pair),
    ]);
  }

  async state(limit: LimitName, key: string): Promise<LimitState> {
    const res = await this.#limiters[limit].get(key);
    // The memory store may hold a key past its window until its timer deletes it.
    if (res === null || res.msBeforeNext <= 0) return { failures: 0, retryAfterSeconds: null };
    const failures = Math.min(res.consumedPoints, LOGIN_LIMITS[limit].points);
    const blocked = failures >= LOGIN_LIMITS[limit].points;
    return { failures, retryAfterSeconds: blocked ? secondsOf(res.msBeforeNext) : null };
  }

  /** Clears the account's own limit; its pairs keep theirs, so they cannot lock it again. */
  async unlock(account: string): Promise<LimitState> {
    const before = await this.state('account', account);
    await this.#limiters.account.delete(account);
    return before;
  }

  #entries(keys: LimitKeys): [LimitName, string][] {
    return Object.entries(keys).filter(([, key]) => key !== undefined) as [LimitName, string][];
  }

  async #giveBack(entries: [LimitName, string][]): Promise<void> {
    await Promise.all(entries.map(([limit, key]) => this.#limiters[limit].reward(key)));
  }
}
