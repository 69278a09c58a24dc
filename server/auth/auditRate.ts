import type { NewAuditEvent } from './auditLog.js';

/** Per window, the refusals of a type, account and client kept one by one; clients told apart. */
export const AUDIT_RATE = { perClient: 5, windowMs: 60_000, maxClients: 1_000 };

/** The address of the summary of the clients past `maxClients`. */
export const MANY_ADDRESSES = '*';

/** The events a stranger can make at will; every other event is kept one by one. */
const RATED = new Set(['login.failed', 'login.throttled']);

type Tally = { kept: number; summary?: NewAuditEvent & { detail: { count: number } } };

/**
 * In each fixed window, the first `perClient` refusals of a type, account and client are kept;
 * the others are counted in one summary (the first of them, with `detail.count`), kept once the
 * window has ended. A summary of unknown emails names none: the first would be the attacker's.
 */
export class EventRate {
  #window = -1;
  /** Each client's tally, by type and account. */
  readonly #tallies = new Map<string, Map<string, Tally>>();

  constructor(private readonly rate: typeof AUDIT_RATE) {}

  /** The summaries of a window that has ended, then `event` unless it is counted. */
  take(event: NewAuditEvent, client: string): NewAuditEvent[] {
    const kept = this.ended();
    if (!RATED.has(event.type)) return [...kept, event];
    const subject = `${event.type} ${event.userId}`;
    const clients = this.#tallies.get(subject) ?? new Map<string, Tally>();
    this.#tallies.set(subject, clients);
    const many = !clients.has(client) && clients.size >= this.rate.maxClients;
    const key = many ? MANY_ADDRESSES : client;
    const tally = clients.get(key) ?? { kept: many ? Infinity : 0 };
    clients.set(key, tally);
    if (tally.kept++ < this.rate.perClient) return [...kept, event];
    const email = event.userId === null ? null : event.email;
    const address = many ? MANY_ADDRESSES : event.address;
    tally.summary ??= { ...event, email, address, detail: { ...event.detail, count: 0 } };
    tally.summary.detail.count++;
    return kept;
  }

  ended(): NewAuditEvent[] {
    const window = Math.floor(Date.now() / this.rate.windowMs);
    if (window === this.#window) return [];
    this.#window = window;
    const tallies = [...this.#tallies.values()].flatMap((clients) => [...clients.values()]);
    this.#tallies.clear();
    return tallies.flatMap(({ summary }) => summary ?? []);
  }
}
