import type { Context } from 'koa';
import type { AuthConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { normalizeEmail, type Accounts } from './accounts.js';
import { AUDIT_RATE, EventRate, type AuditRate } from './auditRate.js';
import { clientKey } from '../http/clientAddress.js';
import { clientOf, type Client } from './sessions.js';
import type { AuditEventType, AuditEventView } from '../../web/src/pageState.js';

export type { AuditEventType };

/** Each type of security event, and what makes it. */
export const AUDIT_EVENT_TYPES: Record<AuditEventType, string> = {
  'login.succeeded': 'A login was admitted and its session made',
  'login.failed':
    'A login was refused after its password check: a wrong password, an unknown email, or a credential another instance has replaced',
  'login.throttled':
    'A login was refused before any password check (`detail.limit`: pair, address or account; waiting: its address had too many checks waiting)',
  logout: 'A session was ended by logging out',
  'session.ended':
    'Sessions were ended (`detail.by`: owner, admin, cap, or login when a new login in the same browser replaced one)',
  'account.unlocked': "An administrator cleared an account's login throttling",
};

/**
 * What an event says of itself: the reason of a refusal, how many sessions ended, who ended them.
 * Never a secret.
 */
export type EventDetail = AuditEvent['detail'];

/** A security event, as administrators read it: the shape the admin pages read too. */
export type AuditEvent = AuditEventView;

export type NewAuditEvent = Omit<AuditEvent, 'id'>;

/**
 * Which events to read: newest first, at most `limit`, older than the event `before`, of one type,
 * of one email.
 */
export interface AuditQuery {
  limit: number;
  before?: number;
  type?: AuditEventType;
  email?: string;
}

/**
 * For how many days, and how many events at most, the trail is kept (AUDIT_RETENTION_DAYS,
 * AUDIT_MAX_EVENTS).
 */
export type AuditLimits = AuthConfig['audit'];

/** Where events are kept: this process's ring (AuditRing), or PostgreSQL (PostgresAuditLog). */
export interface AuditKeeper {
  /**
   * Takes events to keep, in the order they happened. Never waits and never throws: a failure to
   * store them is logged.
   */
  keep(events: NewAuditEvent[]): void;
  /**
   * Events kept within the limits, newest first, those this process took before the call included.
   */
  list(query: AuditQuery): Promise<AuditEvent[]>;
}

/** The request an event comes with: the client's address, its browser and the request's id. */
export interface RequestFacts extends Client {
  requestId: string;
}

export const requestFacts = (ctx: Context): RequestFacts => ({
  ...clientOf(ctx),
  requestId: ctx.state.requestId,
});

/**
 * Whom an event is about: the email a login tried (none before its body is read), or an account.
 */
export type Subject = { email?: string } | { userId: string };

const DAY_MS = 24 * 3600 * 1000;

/**
 * The time before which events are past the retention, as events write their time (ISO strings of
 * one form compare as times do).
 */
export const retentionStart = (limits: AuditLimits, now: number) =>
  new Date(now - limits.retentionDays * DAY_MS).toISOString();

/**
 * The most bytes of the email and address a log line repeats, so that a line stays under 500 bytes
 * whatever the client sent.
 */
const LOGGED_BYTES = 48;

/**
 * The security events of the login service: each is written as a log line (`event`: its type)
 * and kept for administrators, at most at the rate EventRate allows (past it, events are counted
 * in summaries). Recording never waits: the keeper stores events after the answer. `recorded`,
 * when given, is told the type of every event recorded, whatever the rate (the metrics count
 * login attempts so).
 */
export class AuditTrail {
  readonly #rate: EventRate;

  constructor(
    private readonly keeper: AuditKeeper,
    private readonly accounts: Pick<Accounts, 'idOf' | 'byId'>,
    private readonly logger: Logger,
    private readonly recorded?: (type: AuditEventType) => void,
    rate: AuditRate = AUDIT_RATE,
  ) {
    this.#rate = new EventRate(rate);
  }

  record(
    type: AuditEventType,
    request: RequestFacts,
    subject: Subject,
    detail: EventDetail = {},
  ): void {
    this.recorded?.(type);
    const event: NewAuditEvent = {
      time: new Date().toISOString(),
      type,
      ...this.#who(subject),
      address: request.address,
      userAgent: storable(request.userAgent),
      requestId: request.requestId,
      detail,
    };
    this.#keep(this.#rate.take(event, clientKey(request.address)));
  }

  /** A page of events, newest first, and the `before` of the next page (null: none). */
  async list(query: AuditQuery): Promise<{ events: AuditEvent[]; next: number | null }> {
    this.keepEnded();
    const events = await this.keeper.list({
      ...query,
      limit: query.limit + 1,
      email: query.email === undefined ? undefined : normalizeEmail(query.email),
    });
    const page = events.slice(0, query.limit);
    return { events: page, next: events.length > query.limit ? page[page.length - 1]!.id : null };
  }

  /** Keeps the summaries of a window that has ended: before events are read, and in the upkeep. */
  keepEnded(): void {
    this.#keep(this.#rate.ended());
  }

  #keep(events: NewAuditEvent[]): void {
    if (events.length === 0) return;
    for (const event of events) this.#log(event);
    this.keeper.keep(events);
  }

  /**
   * The event's line: short, without the browser's name (kept with the event), refusals at warn.
   */
  #log({ type, email, userId, address, requestId, detail }: NewAuditEvent): void {
    const level = type === 'login.throttled' ? 'warn' : 'info';
    this.logger[level]({
      event: type,
      ...(email !== null && { email: cut(email, LOGGED_BYTES) }),
      ...(userId !== null && { userId }),
      address: cut(address, LOGGED_BYTES),
      // Whole (at most 128 characters), as every other line of the request carries it.
      reqId: requestId,
      detail,
    });
  }

  #who(subject: Subject): { email: string | null; userId: string | null } {
    if ('userId' in subject) {
      const account = this.accounts.byId(subject.userId);
      return { email: account ? normalizeEmail(account.email) : null, userId: subject.userId };
    }
    if (subject.email === undefined) return { email: null, userId: null };
    return {
      email: storable(normalizeEmail(subject.email)),
      userId: this.accounts.idOf(subject.email) ?? null,
    };
  }
}

/**
 * A client's text as PostgreSQL can store it: U+0000 and halves of surrogate pairs become U+FFFD.
 */
const storable = (text: string) =>
  text.replace(/\p{Cs}/gu, '\uFFFD').replaceAll('\u0000', '\uFFFD');

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** `text` in at most `bytes` bytes of a JSON line (its escapes counted), cut with an ellipsis. */
function cut(text: string, bytes: number): string {
  if (jsonBytes(text) <= bytes) return text;
  let end = 0;
  let size = jsonBytes('…');
  for (const char of text) {
    size += jsonBytes(char);
    if (size > bytes) break;
    end += char.length;
  }
  return `${text.slice(0, end)}…`;
}

/**
 * The trail in this process (SESSION_STORE=memory): the events within the retention, at most
 * `maxEvents` of them, oldest dropped first. Ids grow with each event kept, from 1 at each start.
 */
export class AuditRing implements AuditKeeper {
  /**
   * Oldest first; the slots before #head are dropped events, released until the array is compacted.
   */
  #events: (AuditEvent | undefined)[] = [];
  #head = 0;
  #lastId = 0;

  constructor(private readonly limits: AuditLimits) {}

  keep(events: NewAuditEvent[]): void {
    for (const event of events) this.#events.push({ id: ++this.#lastId, ...event });
    this.#trim();
  }

  async list({ limit, before, type, email }: AuditQuery): Promise<AuditEvent[]> {
    this.#trim();
    const found: AuditEvent[] = [];
    for (let at = this.#below(before) - 1; at >= this.#head && found.length < limit; at--) {
      const event = this.#events[at]!;
      if (
        (type === undefined || event.type === type) &&
        (email === undefined || event.email === email)
      )
        found.push(event);
    }
    return found;
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

  /**
   * The index just past the newest event whose id is below `before` (all of them without it): ids
   * grow along the array.
   */
  #below(before: number | undefined): number {
    let [low, high] = [this.#head, this.#events.length];
    if (before === undefined) return high;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.#events[middle]!.id < before) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * Drops what is past the count or the retention; the array is compacted once half of it is
   * dropped slots.
   */
  #trim(): void {
    const oldest = retentionStart(this.limits, Date.now());
    const past = this.#events.length - this.limits.maxEvents;
    while (
      this.#head < this.#events.length &&
      (this.#head < past || this.#events[this.#head]!.time < oldest)
    )
      this.#events[this.#head++] = undefined;
    if (this.#head * 2 >= this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
  }
}
