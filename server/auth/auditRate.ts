import type { EventDetail, NewAuditEvent } from './auditLog.js';

/** How many login refusals are kept one by one; past it they are counted. */
export interface AuditRate {
  /** Refusals of one type, account (or unknown email) and client kept one by one per window. */
  perClient: number;
  windowMs: number;
  /**
   * Clients told apart per window for each type and account (or unknown email); the refusals of
   * any other client are counted together.
   */
  maxClients: number;
}

/**
 * 5 refusals a minute of each type, account and client, 1,000 clients a minute: a person's
 * mistakes are each kept, while a flood keeps at most 6 events (5 and a summary) per type, account
 * and client per minute, and at most about 6,000 per type and account per minute.
 */
export const AUDIT_RATE: AuditRate = { perClient: 5, windowMs: 60_000, maxClients: 1_000 };

/** The address of a summary that counts the refusals of clients past a window's `maxClients`. */
export const MANY_ADDRESSES = '*';

/** The events a flood can make at will; every other event is kept one by one. */
const RATED = new Set(['login.failed', 'login.throttled']);

interface Tally {
  kept: number;
  /** Every summary of this tally stands for events of many addresses. */
  address?: string;
  summary?: NewAuditEvent & { detail: EventDetail & { count: number } };
}

/**
 * Which login refusals are kept one by one, and which are counted: in each window (fixed,
 * `windowMs` long), the first `perClient` of a type, account (or unknown email) and client are
 * kept; the others are counted in one summary, the first of them with `detail.count` saying how
 * many it stands for, kept once its window has ended. A summary never mixes accounts, and one of
 * unknown emails names none (the first email would be the attacker's choice). Past `maxClients`
 * clients of a type and account in a window, the rest are counted in one summary whose address is
 * `*`. In this process: several processes keep as many each.
 */
export class EventRate {
  #window: number | undefined;
  readonly #tallies = new Map<string, Tally>();
  /** Clients told apart in this window, by type and account. */
  readonly #clients = new Map<string, number>();

  constructor(private readonly rate: AuditRate) {}

  /**
   * What to keep for `event` of `client`: the summaries of a window that has ended, then the event
   * itself unless it is counted.
   */
  take(event: NewAuditEvent, client: string): NewAuditEvent[] {
    const kept = this.ended();
    if (!RATED.has(event.type)) return [...kept, event];
    const tally = this.#tallyOf(`${event.type}\n${event.userId ?? ''}`, client);
    if (tally.kept < this.rate.perClient) {
      tally.kept++;
      kept.push(event);
    } else if (tally.summary) tally.summary.detail.count++;
    else
      tally.summary = {
        ...event,
        email: event.userId === null ? null : event.email,
        address: tally.address ?? event.address,
        detail: { ...event.detail, count: 1 },
      };
    return kept;
  }

  /** The summaries of the window that has ended since the last call, if it has. */
  ended(): NewAuditEvent[] {
    const window = Math.floor(Date.now() / this.rate.windowMs);
    if (window === this.#window) return [];
    this.#window = window;
    const summaries = [...this.#tallies.values()].flatMap((tally) =>
      tally.summary ? [tally.summary] : [],
    );
    this.#tallies.clear();
    this.#clients.clear();
    return summaries;
  }

  #tallyOf(subject: string, client: string): Tally {
    const key = `${subject}\n${client}`;
    const known = this.#tallies.get(key);
    if (known) return known;
    const clients = this.#clients.get(subject) ?? 0;
    if (clients < this.rate.maxClients) {
      this.#clients.set(subject, clients + 1);
      const tally = { kept: 0 };
      this.#tallies.set(key, tally);
      return tally;
    }
    const many = `${subject}\n${MANY_ADDRESSES}`;
    const tally = this.#tallies.get(many) ?? { kept: Infinity, address: MANY_ADDRESSES };
    this.#tallies.set(many, tally);
    return tally;
  }
}
