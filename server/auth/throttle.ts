import type { Database } from '../db/pool.js';
import {
  FailureLog,
  PostgresFailureCounts,
  type Admission,
  type FailureState,
  type Outcome,
  type ResettableFailureCounts,
} from './failureCounts.js';

/** The limits of login throttling; docs/security.md describes the scheme. */
export interface ThrottleLimits {
  /**
   * Failures of one account from one client address (or one trusted device) before that pair waits.
   */
  perPair: number;
  pairWindowMs: number;
  /**
   * Failures of one account from untrusted clients, all addresses together, before such clients
   * wait.
   */
  perAccount: number;
  accountWindowMs: number;
}

export const THROTTLE_LIMITS: ThrottleLimits = {
  perPair: 5,
  pairWindowMs: 15 * 60 * 1000,
  perAccount: 100,
  accountWindowMs: 60 * 60 * 1000,
};

/**
 * Who is trying: a configured account's id, the client (see clientKey), and the trusted device it
 * proved, if any.
 */
export interface Attempt {
  account: string;
  client: string;
  device?: string;
}

/** An account's login throttling as it stands: its own count, and each client's with it. */
export interface AccountBlocks {
  /** The failures of the account from clients it does not trust, all addresses together. */
  account: FailureState;
  /**
   * Each client address (its key, see clientKey), or trusted device (no address), that failed the
   * account within the pair window.
   */
  clients: { address?: string; state: FailureState }[];
}

/** Attempts that may wait for one key before more are refused. */
const MAX_WAITING = 32;

/**
 * Throttling that protects the configured accounts without handing attackers a lockout:
 * - each account and client address (or trusted device) pair may fail `perPair` times per
 *   window; past it, that pair waits, and nobody else does;
 * - each account may fail `perAccount` times per window from clients it does not trust; past
 *   it, such clients wait, so guessing from many addresses stays bounded, while a browser that
 *   has logged in to the account before (it holds a device cookie for it) still gets in;
 * - an attempt counts as a failure only once its password was checked and found wrong, so correct
 *   logins are never refused for arriving together; attempts that could pass a limit if they all
 *   failed wait for the ones in flight instead of being checked at the same time.
 * Only the configured accounts are counted here (unknown emails are held by the address budget),
 * so strangers cannot fill these tables to make them forget: the accounts' keys are the accounts
 * themselves, and a pair key exists only for a failure within the pair window, which the account
 * limit bounds to `perAccount` per account, or for a trusted device, which only a login makes.
 */
export class LoginThrottle {
  readonly #inFlight = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  private constructor(
    private readonly pairs: ResettableFailureCounts,
    private readonly accounts: ResettableFailureCounts,
    private readonly limits: ThrottleLimits,
    /** Deletes what the counts no longer need (PostgreSQL's rows; a FailureLog sweeps itself). */
    readonly sweep: () => Promise<void> = async () => undefined,
  ) {}

  /**
   * Counts kept in this process: the default, and the spec's single process. Bounded by the
   * accounts, as said above.
   */
  static inMemory(now: () => number, limits = THROTTLE_LIMITS): LoginThrottle {
    return new LoginThrottle(
      new FailureLog(limits.perPair, limits.pairWindowMs, now),
      new FailureLog(limits.perAccount, limits.accountWindowMs, now),
      limits,
    );
  }

  /** Counts shared by every instance on the database. */
  static inPostgres(db: Database, limits = THROTTLE_LIMITS): LoginThrottle {
    const pairs = new PostgresFailureCounts(db, 'pair', limits.perPair, limits.pairWindowMs);
    const accounts = new PostgresFailureCounts(
      db,
      'account',
      limits.perAccount,
      limits.accountWindowMs,
    );
    return new LoginThrottle(pairs, accounts, limits, async () => {
      await pairs.sweep();
      await accounts.sweep();
    });
  }

  /** Admits the attempt, or says how many seconds it must wait. */
  async admit(attempt: Attempt): Promise<Admission> {
    const keys = this.#keys(attempt);
    for (;;) {
      // Asked together: with PostgreSQL, one round trip rather than two.
      const [pair, account] = await Promise.all([
        this.pairs.state(keys.pair),
        keys.account === undefined ? undefined : this.accounts.state(keys.account),
      ]);
      if (pair.retryAfterSeconds !== undefined)
        return { retryAfterSeconds: pair.retryAfterSeconds, limit: 'pair' };
      if (account?.retryAfterSeconds !== undefined)
        return { retryAfterSeconds: account.retryAfterSeconds, limit: 'account' };
      const full =
        pair.failures + this.#flying(keys.pair) >= this.limits.perPair
          ? keys.pair
          : keys.account !== undefined &&
              account!.failures + this.#flying(keys.account) >= this.limits.perAccount
            ? keys.account
            : undefined;
      if (full === undefined) {
        for (const key of [keys.pair, keys.account])
          if (key !== undefined) this.#inFlight.set(key, this.#flying(key) + 1);
        return { settle: (outcome) => this.#settle(keys, outcome, pair.failures > 0) };
      }
      const queue = this.#waiting.get(full) ?? [];
      if (queue.length >= MAX_WAITING)
        return { retryAfterSeconds: 1, limit: full === keys.pair ? 'pair' : 'account' };
      this.#waiting.set(full, queue);
      await new Promise<void>((resolve) => queue.push(resolve));
    }
  }

  /** The account's counts: its own, and each client's with it. */
  async blocksOf(account: string): Promise<AccountBlocks> {
    const [clients, own] = await Promise.all([
      this.pairs.statesFrom(pairPrefix(account)),
      this.accounts.state(account),
    ]);
    return blocks(account, own, clients);
  }

  /**
   * Clears every count of the account, from every client and trusted device: what they were. The
   * failures of each address stay in its budget (see AddressBudget), which belongs to the address,
   * all accounts together, not to this account.
   */
  async clear(account: string): Promise<AccountBlocks> {
    const [clients, own] = await Promise.all([
      this.pairs.resetFrom(pairPrefix(account)),
      this.accounts.state(account),
    ]);
    await this.accounts.reset(account);
    return blocks(account, own, clients);
  }

  /**
   * A wrong password counts, a right one clears its pair (when it has failures to clear), an
   * attempt never checked neither.
   */
  async #settle(
    keys: { pair: string; account?: string },
    outcome: Outcome,
    pairFailed: boolean,
  ): Promise<void> {
    try {
      if (outcome === 'succeeded' && pairFailed) await this.pairs.reset(keys.pair);
      if (outcome === 'failed')
        await Promise.all([
          this.pairs.record(keys.pair),
          keys.account === undefined ? undefined : this.accounts.record(keys.account),
        ]);
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
  #keys({ account, client, device }: Attempt): { pair: string; account?: string } {
    return {
      pair: `${pairPrefix(account)}${device ? `${DEVICE}${device}` : client}`,
      account: device ? undefined : account,
    };
  }
}

/**
 * What the keys of an account's pairs begin with: the account, then its client address or `device
 * <id>`.
 */
const pairPrefix = (account: string) => `${account}\n`;
const DEVICE = 'device ';

/**
 * The account's counts as AccountBlocks, from its pairs' keys: a trusted device's stays nameless.
 */
function blocks(
  account: string,
  own: FailureState,
  pairs: Map<string, FailureState>,
): AccountBlocks {
  const prefix = pairPrefix(account);
  return {
    account: own,
    clients: [...pairs].map(([key, state]) => {
      const client = key.slice(prefix.length);
      return client.startsWith(DEVICE) ? { state } : { address: client, state };
    }),
  };
}
