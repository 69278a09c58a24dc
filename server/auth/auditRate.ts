import type { EventDetail, NewAuditEvent } from './auditLog.js';

export interface AuditRate {
  /** Refusals of one type, account (or unknown email) and client kept one by one per window. */
  perClient: number;
  windowMs: number;
  /** Clients told apart per window, type and account; the others are counted together. */
  maxClients: number;
}

export const AUDIT_RATE: AuditRate = { perClient: 5, windowMs: 60_000, maxClients: 1_000 };

/** The address of the summary of the clients past `maxClients`. */
export const MANY_ADDRESSES = '*';

/** The events a stranger can make at will; every other event is kept one by one. */
const RATED = new Set(['login.failed', 'login.throttled']);

interface Tally {
  kept: number;
  address?: string;
  summary?: NewAuditEvent & { detail: EventDetail & { count: number } };
}

/**
 * In each fixed window, the first `perClient` refusals of a type, account and client are kept;
 * the others are counted in one summary (the first of them, with `detail.count`), kept once the
 * window has ended. A summary of unknown emails names none: the first would be the attacker's.
 */
export class EventRate {
  #window: number | undefined;
  readonly #tallies = new Map<string, Tally>();
  /** Clients told apart in this window, by type and account. */
  readonly #clients = new Map<string, number>();

  constructor(private readonly rate: AuditRate) {}

  /** The summaries of a window that has ended, then `event` unless it is counted. */
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

  ended(): NewAuditEvent[] {
    const window = Math.floor(Date.now() / this.rate.windowMs);
    if (window === this.#window) return [];
    this.#window = window;
    const summaries = [...this.#tallies.values()].flatMap(({ summary }) => summary ?? []);
    this.#tallies.clear();
    this.#clients.clear();
    return summaries;
  }

  #tallyOf(subject: string, client: string): Tally {
    const known = this.#tallies.get(`${subject}\n${client}`);
    if (known) return known;
    const clients = this.#clients.get(subject) ?? 0;
    const many = clients >= this.rate.maxClients;
    if (!many) this.#clients.set(subject, clients + 1);
    const key = `${subject}\n${many ? MANY_ADDRESSES : client}`;
    const tally =
      this.#tallies.get(key) ?? (many ? { kept: Infinity, address: MANY_ADDRESSES } : { kept: 0 });
    this.#tallies.set(key, tally);
    return tally;
  }
}
