import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AccountThrottle } from '../../web/src/pageState.js';
import type { Database } from '../db/pool.js';

/** Failed logins each key may spend per window (docs/security.md, Login throttling). */
export const LOGIN_LIMITS = {
  /** One account from one client address, or from one trusted device. */
  pair: { points: 5, duration: 15 * 60 },
  /** One client address, every account and unknown email together. */
  address: { points: 50, duration: 15 * 60 },
  /** One account from untrusted clients, every address together. */
  account: { points: 100, duration: 60 * 60 },
};

type LimitName = keyof typeof LOGIN_LIMITS;
export type LimitKeys = Partial<Record<LimitName, string>>;
/** `waiting`: the address has too many checks waiting already. */
export type Refusal = { limit: LimitName | 'waiting'; retryAfterSeconds: number };

const secondsOf = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
const entriesOf = (keys: LimitKeys) =>
  Object.entries(keys).filter(([, key]) => key !== undefined) as [LimitName, string][];

/**
 * In this process, or in table `login_limits` for every instance. An attempt spends a point of
 * each key before its check and gets it back unless the check failed: attempts checked together
 * never pass a limit together, and a correct login costs nothing.
 */
export class LoginLimits {
  readonly #limiters = {} as Record<LimitName, RateLimiterAbstract>;

  constructor(db?: Database) {
    const table = { tableName: 'login_limits', tableCreated: true, storeType: 'pool' };
    for (const [keyPrefix, limit] of Object.entries(LOGIN_LIMITS))
      this.#limiters[keyPrefix as LimitName] = db
        ? new RateLimiterPostgres({ keyPrefix, ...limit, ...table, storeClient: db })
        : new RateLimiterMemory({ keyPrefix, ...limit });
  }

  /** The first limit the keys have spent, spending nothing. */
  async refusal(keys: LimitKeys): Promise<Refusal | undefined> {
    const states = entriesOf(keys).map(async ([limit, key]) => ({
      limit,
      ...(await this.state(limit, key)),
    }));
    const spent = (await Promise.all(states)).find((state) => state.blocked);
    return spent && { limit: spent.limit, retryAfterSeconds: spent.retryAfterSeconds! };
  }

  /** Spends a point of each key; when one is spent already, gives every point back: the longest. */
  async spend(keys: LimitKeys): Promise<Refusal | undefined> {
    const entries = entriesOf(keys);
    const spent = entries.map(([limit, key]) =>
      this.#limiters[limit].consume(key).then(
        () => undefined,
        (refused: unknown) => {
          if (!(refused instanceof RateLimiterRes)) throw refused;
          return { limit, retryAfterSeconds: secondsOf(refused.msBeforeNext) };
        },
      ),
    );
    const refusals = (await Promise.all(spent)).filter((refusal) => refusal !== undefined);
    if (refusals.length > 0) await this.#giveBack(entries);
    return refusals.sort((a, b) => b.retryAfterSeconds - a.retryAfterSeconds)[0];
  }

  /** What the check found: only a failure keeps its points, and a success clears its pair. */
  async settle(keys: LimitKeys, outcome: 'succeeded' | 'failed' | 'unchecked'): Promise<void> {
    if (outcome === 'failed') return;
    const { pair, ...others } = keys;
    await this.#giveBack(entriesOf(outcome === 'succeeded' ? others : keys));
    if (pair !== undefined && outcome === 'succeeded') await this.#limiters.pair.delete(pair);
  }

  async state(limit: LimitName, key: string): Promise<AccountThrottle> {
    const res = await this.#limiters[limit].get(key);
    const { points } = LOGIN_LIMITS[limit];
    // The memory store may hold a key past its window until its timer deletes it.
    const failures = res && res.msBeforeNext > 0 ? Math.min(res.consumedPoints, points) : 0;
    const blocked = failures >= points;
    return { blocked, failures, retryAfterSeconds: blocked ? secondsOf(res!.msBeforeNext) : null };
  }

  /** Clears the account's own limit; its pairs keep theirs, so they cannot lock it again. */
  async unlock(account: string): Promise<AccountThrottle> {
    const before = await this.state('account', account);
    await this.#limiters.account.delete(account);
    return before;
  }

  async #giveBack(entries: [LimitName, string][]): Promise<void> {
    await Promise.all(entries.map(([limit, key]) => this.#limiters[limit].reward(key)));
  }
}
