import type { Database } from '../db/pool.js';
import { TurnsByKey } from './turnsByKey.js';
import {
  FailureLog,
  PostgresCountsRememberingBlocks,
  PostgresFailureCounts,
  type Admission,
  type FailureCounts,
  type Outcome,
} from './failureCounts.js';

/** What one client address may do, whatever the accounts and emails it tries. */
export interface AddressLimits {
  /** Logins it may fail per window. */
  perAddress: number;
  windowMs: number;
  /** Login attempts it may have in progress at once, per process (see AttemptsInFlight). */
  atOnce: number;
}

export const ADDRESS_LIMITS: AddressLimits = {
  perAddress: 50,
  windowMs: 15 * 60 * 1000,
  atOnce: 2,
};

/**
 * Client addresses the memory table holds at most. Each holds at least one failure, and failures
 * come only from password checks: 2 at once at ~35 ms each (the default cost on a typical
 * server core) is ~58 a second, ~52,000 in one 15-minute window, all addresses together. Twice
 * that leaves room for a faster machine; only checks much cheaper than the default can fill it,
 * and then newcomers are refused rather than anyone forgotten. A key costs ~125 bytes with one
 * failure and 8 more per failure (~520 with the limit's 50): under 7 MB for the failures of a
 * window at the default cost, however spread, and ~52 MB if every key were blocked.
 */
const MAX_TRACKED_ADDRESSES = 100_000;

/**
 * The failures each client address may cause, all accounts and unknown emails together: past
 * the limit, the address waits until its oldest failure leaves the window, at the cost of one
 * lookup and no password check. Counted in this process or, shared by every instance, in
 * PostgreSQL; attempts in flight are tracked per process, and those that could pass the limit if
 * they all failed are told to come back once the others are through.
 *
 * An address's admissions and the ends of its attempts take turns: a count read from PostgreSQL
 * is a snapshot, and an attempt that ended between the snapshot and the decision would be
 * counted neither there nor in flight, letting one more check through than the limit.
 */
export class AddressBudget {
  readonly #inFlight = new Map<string, number>();
  readonly #turns = new TurnsByKey();
  /** Attempts in flight from addresses the counts do not hold yet: each may need a place. */
  #newcomers = 0;

  private constructor(
    private readonly counts: FailureCounts,
    private readonly limits: AddressLimits,
    /** Deletes what the counts no longer need (PostgreSQL's rows; a FailureLog sweeps itself). */
    readonly sweep: () => Promise<void> = async () => undefined,
  ) {}

  static inMemory(
    now: () => number,
    limits = ADDRESS_LIMITS,
    maxAddresses = MAX_TRACKED_ADDRESSES,
  ): AddressBudget {
    return new AddressBudget(
      new FailureLog(limits.perAddress, limits.windowMs, now, maxAddresses),
      limits,
    );
  }

  /**
   * Counts shared by every instance; a blocked address that keeps trying costs no statement until
   * its wait ends.
   */
  static inPostgres(db: Database, now: () => number, limits = ADDRESS_LIMITS): AddressBudget {
    const counts = new PostgresCountsRememberingBlocks(
      new PostgresFailureCounts(db, 'address', limits.perAddress, limits.windowMs),
      limits.perAddress,
      now,
    );
    return new AddressBudget(counts, limits, () => counts.sweep());
  }

  /** Admits an attempt from `address`, or says how many seconds it must wait. */
  admit(address: string): Promise<Admission> {
    return this.#turns.run(address, () => this.#admit(address));
  }

  async #admit(address: string): Promise<Admission> {
    const { failures, retryAfterSeconds } = await this.counts.state(address);
    if (retryAfterSeconds !== undefined) return { retryAfterSeconds, limit: 'address' };
    const newcomer = failures === 0;
    const noRoom = newcomer ? await this.counts.waitForRoom(address, this.#newcomers) : undefined;
    if (noRoom !== undefined) return { retryAfterSeconds: noRoom, limit: 'address' };
    const flying = this.#inFlight.get(address) ?? 0;
    if (failures + flying >= this.limits.perAddress)
      return { retryAfterSeconds: 1, limit: 'address' };
    this.#inFlight.set(address, flying + 1);
    if (newcomer) this.#newcomers++;
    return { settle: (outcome) => this.#settle(address, outcome, newcomer) };
  }

  async #settle(address: string, outcome: Outcome, newcomer: boolean): Promise<void> {
    try {
      if (outcome === 'failed') await this.counts.record(address);
    } finally {
      await this.#turns.run(address, () => this.#land(address, newcomer));
    }
  }

  #land(address: string, newcomer: boolean): void {
    const flying = this.#inFlight.get(address)! - 1;
    if (flying > 0) this.#inFlight.set(address, flying);
    else this.#inFlight.delete(address);
    if (newcomer) this.#newcomers--;
  }
}
