import type { EventDetail, NewAuditEvent } from './auditLog.js';

/** How many security events are kept one by one; past it they are counted. */
export interface AuditRate {
  /** Events of one type from one client (see clientKey) kept one by one per window. */
  perClient: number;
  windowMs: number;
  /**
   * Pairs of a type and a client tracked per window; the events of any other client are counted
   * together, per type.
   */
  maxClients: number;
}

/**
 * 5 events a minute of each type from each client, 1,000 clients a minute: a person's mistakes
 * are each kept, while a flood keeps at most 6 events (5 and a summary) per type and client
 * per minute, and at most 6,000 or so per minute in all, however many addresses it comes from.
 */
export const AUDIT_RATE: AuditRate = { perClient: 5, windowMs: 60_000, maxClients: 1_000 };

/** The address of a summary that counts the events of clients past a window's `maxClients`. */
export const MANY_ADDRESSES = '*';

interface Tally {
  kept: number;
  /** Every summary of this tally stands for events of many addresses. */
  address?: string;
  summary?: NewAuditEvent & { detail: EventDetail & { count: number } };
}

/**
 * Which security events are kept one by one, and which are counted: in each window (fixed,
 * `windowMs` long), the first `perClient` events of a type from a client are kept; the others
 * are counted in one summary, the first of them with `detail.count` saying how many it stands
 * for, kept once its window has ended. Events of clients past `maxClients` in a window are
 * counted in one summary per type, whose address is `*`. In this process: several processes
 * keep as many each.
 */
export class EventRate {
  #window: number | undefined;
  readonly #tallies = new Map<string, Tally>();

  constructor(
    private readonly rate: AuditRate,
    private readonly now: () => number,
  ) {}

  /**
   * What to keep for `event` of `client`: the summaries of a window that has ended, then the event
   * itself unless it is counted.
   */
  take(event: NewAuditEvent, client: string): NewAuditEvent[] {
    const kept = this.ended();
    const tally = this.#tallyOf(event.type, client);
    if (tally.kept < this.rate.perClient) {
      tally.kept++;
      kept.push(event);
    } else if (tally.summary) tally.summary.detail.count++;
    else
      tally.summary = {
        ...event,
        address: tally.address ?? event.address,
        detail: { ...event.detail, count: 1 },
      };
    return kept;
  }

  /** The summaries of the window that has ended since the last call, if it has. */
  ended(): NewAuditEvent[] {
    const window = Math.floor(this.now() / this.rate.windowMs);
    if (window === this.#window) return [];
    this.#window = window;
    const summaries = [...this.#tallies.values()].flatMap((tally) =>
      tally.summary ? [tally.summary] : [],
    );
    this.#tallies.clear();
    return summaries;
  }

  #tallyOf(type: string, client: string): Tally {
    const key = `${type}\n${client}`;
    const known = this.#tallies.get(key);
    if (known) return known;
    const full = this.#tallies.size >= this.rate.maxClients;
    const tally: Tally = full
      ? (this.#tallies.get(`${type}\n${MANY_ADDRESSES}`) ?? {
          kept: Infinity,
          address: MANY_ADDRESSES,
        })
      : { kept: 0 };
    this.#tallies.set(full ? `${type}\n${MANY_ADDRESSES}` : key, tally);
    return tally;
  }
}
