import type { Context } from 'koa';
import type { AuthConfig } from '../config.js';
import { clientKey } from '../http/clientAddress.js';
import type { Logger } from '../logger.js';
import type { AuditEventType, AuditEventView as AuditEvent } from '../../web/src/pageState.js';
import { normalizeEmail, type Accounts } from './accounts.js';
import { AUDIT_RATE, EventRate } from './auditRate.js';
import type { Client } from './sessions.js';

export type { AuditEvent, AuditEventType };
export type NewAuditEvent = Omit<AuditEvent, 'id'>;
/** Newest first, older than the event `before`. */
export type AuditQuery = { limit: number; before?: number; type?: AuditEventType; email?: string };
export type RequestFacts = Client & { requestId: string };
type LoginOutcome = AuditEventType extends `login.${infer Outcome}` ? Outcome : never;

export const AUDIT_EVENT_TYPES: Record<AuditEventType, string> = {
  'login.succeeded': 'A login was admitted and its session made',
  'login.failed': 'A login was refused after its password check',
  'login.throttled': 'A login was refused before any password check (`detail.limit`)',
  logout: 'A session was ended by logging out',
  'session.ended': 'Sessions were ended (`detail.by`: owner, admin, cap or login)',
  'account.unlocked': "An administrator cleared an account's login throttling",
};

/** A long browser name is cut and copied: a slice would keep the whole header alive with it. */
export function requestFacts(ctx: Context): RequestFacts {
  const userAgent = ctx.get('user-agent');
  const cut = userAgent.length <= 256 ? userAgent : Buffer.from(userAgent.slice(0, 256)).toString();
  return { address: ctx.ip, userAgent: cut, requestId: ctx.state.requestId };
}

/**
 * Each security event is a log line and is kept for administrators in this process's ring, past
 * EventRate's rate counted in summaries. Every login's outcome is counted, whatever the rate.
 */
export class AuditTrail {
  readonly #rate = new EventRate(AUDIT_RATE);

  constructor(
    private readonly ring: AuditRing,
    private readonly accounts: Pick<Accounts, 'idOf' | 'byId'>,
    private readonly logger: Logger,
    private readonly countLogin?: (outcome: LoginOutcome) => void,
  ) {}

  /** A login's event is filed under the email it tried, any other under its account. */
  record(
    type: AuditEventType,
    { address, userAgent, requestId }: RequestFacts,
    subject: { email: string } | { userId: string },
    detail: AuditEvent['detail'] = {},
  ) {
    if (type.startsWith('login.')) this.countLogin?.(type.slice('login.'.length) as LoginOutcome);
    const [email, userId] =
      'email' in subject
        ? [subject.email, this.accounts.idOf(subject.email) ?? null]
        : [this.accounts.byId(subject.userId)?.email, subject.userId];
    const time = new Date().toISOString();
    const event = { time, type, email: email === undefined ? null : normalizeEmail(email), userId };
    const client = clientKey(address);
    this.#keep(this.#rate.take({ ...event, address, userAgent, requestId, detail }, client));
  }

  /** A page of events, and the `before` of the next page (null: none). */
  async list({ limit, email, ...query }: AuditQuery) {
    this.#keep(this.#rate.ended());
    const normalized = email === undefined ? undefined : normalizeEmail(email);
    const events = this.ring.list({ ...query, email: normalized, limit: limit + 1 });
    const page = events.slice(0, limit);
    return { events: page, next: events.length > limit ? page.at(-1)!.id : null };
  }

  #keep(events: NewAuditEvent[]): void {
    for (const { type, email, userId, address, requestId, detail } of events)
      this.logger[type === 'login.throttled' ? 'warn' : 'info']({
        event: type,
        ...(email !== null && { email: cut(email) }),
        ...(userId !== null && { userId }),
        address: cut(address),
        reqId: requestId,
        detail,
      });
    this.ring.keep(events);
  }
}

/** Of the email and address, so that a log line stays under 500 bytes. */
const LOGGED_BYTES = 48;
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** `text` in at most LOGGED_BYTES of a JSON line (escapes counted), cut with an ellipsis. */
function cut(text: string): string {
  if (jsonBytes(text) <= LOGGED_BYTES) return text;
  // No character takes less than a byte.
  const kept = [...text].slice(0, LOGGED_BYTES);
  while (jsonBytes(`${kept.join('')}…`) > LOGGED_BYTES) kept.pop();
  return `${kept.join('')}…`;
}

/** This process's events within the retention, at most `maxEvents`; ids from 1 at each start. */
export class AuditRing {
  #events: AuditEvent[] = [];
  #lastId = 0;

  constructor(private readonly limits: AuthConfig['audit']) {}

  keep(events: NewAuditEvent[]): void {
    for (const event of events) this.#events.push({ id: ++this.#lastId, ...event });
    this.#trim();
  }

  list({ limit, before = Infinity, type, email }: AuditQuery): AuditEvent[] {
    this.#trim();
    const matches = (event: AuditEvent) =>
      event.id < before &&
      (type ?? event.type) === event.type &&
      (email ?? event.email) === event.email;
    return this.#events.filter(matches).slice(-limit).reverse();
  }

  get size(): number {
    return this.#events.length;
  }

  /** Drops the expired, and the oldest past `maxEvents`. */
  #trim(): void {
    const oldest = new Date(Date.now() - this.limits.retentionDays * 24 * 3600 * 1000);
    const expired = this.#events.findIndex((event) => event.time >= oldest.toISOString());
    const past = Math.max(this.#events.length - this.limits.maxEvents, 0);
    this.#events.splice(0, expired < 0 ? this.#events.length : Math.max(expired, past));
  }
}
