import type { Context } from 'koa';
import type { AuthConfig } from '../config.js';
import { clientKey } from '../http/clientAddress.js';
import type { Logger } from '../logger.js';
import type { AuditEventType, AuditEventView } from '../../web/src/pageState.js';
import { normalizeEmail, type Accounts } from './accounts.js';
import { AUDIT_RATE, EventRate, type AuditRate } from './auditRate.js';
import type { Client } from './sessions.js';

export type { AuditEventType };

export const AUDIT_EVENT_TYPES: Record<AuditEventType, string> = {
  'login.succeeded': 'A login was admitted and its session made',
  'login.failed':
    'A login was refused after its password check: a wrong password, an unknown email, ' +
    'or a credential another instance has replaced',
  'login.throttled':
    'A login was refused before any password check ' +
    '(`detail.limit`: pair, address or account; ' +
    'waiting: its address had too many checks waiting)',
  logout: 'A session was ended by logging out',
  'session.ended':
    'Sessions were ended (`detail.by`: owner, admin, cap, ' +
    'or login when a new login in the same browser replaced one)',
  'account.unlocked': "An administrator cleared an account's login throttling",
};

export type AuditEvent = AuditEventView;
export type EventDetail = AuditEvent['detail'];
export type NewAuditEvent = Omit<AuditEvent, 'id'>;

/** Newest first, older than the event `before`. */
export interface AuditQuery {
  limit: number;
  before?: number;
  type?: AuditEventType;
  email?: string;
}

export type AuditLimits = AuthConfig['audit'];

/** AuditRing or PostgresAuditLog. */
export interface AuditKeeper {
  keep(events: NewAuditEvent[]): void; // never waits, never throws
  list(query: AuditQuery): Promise<AuditEvent[]>;
}

export interface RequestFacts extends Client {
  requestId: string;
}

const USER_AGENT_CHARS = 256;

/**
 * A long browser name is cut and copied: a slice would keep the whole header alive as long as the
 * session or event holding it.
 */
export function requestFacts(ctx: Context): RequestFacts {
  const userAgent = ctx.get('user-agent');
  return {
    address: ctx.ip,
    userAgent:
      userAgent.length <= USER_AGENT_CHARS
        ? userAgent
        : Buffer.from(userAgent.slice(0, USER_AGENT_CHARS), 'latin1').toString('latin1'),
    requestId: ctx.state.requestId,
  };
}

/** The email a login tried (none before its body was read), or an account. */
export type Subject = { email?: string } | { userId: string };

export const retentionStart = (limits: AuditLimits, now: number) =>
  new Date(now - limits.retentionDays * 24 * 3600 * 1000).toISOString();

/** Of the email and address, so that a log line stays under 500 bytes. */
const LOGGED_BYTES = 48;

/**
 * Each security event is a log line and is kept for administrators, past EventRate's rate counted
 * in summaries. `recorded` is told every event's type, whatever the rate.
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

  record(type: AuditEventType, request: RequestFacts, subject: Subject, detail: EventDetail = {}) {
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

  /** A page of events, and the `before` of the next page (null: none). */
  async list(query: AuditQuery): Promise<{ events: AuditEvent[]; next: number | null }> {
    this.keepEnded();
    const events = await this.keeper.list({
      ...query,
      limit: query.limit + 1,
      email: query.email === undefined ? undefined : normalizeEmail(query.email),
    });
    const page = events.slice(0, query.limit);
    return { events: page, next: events.length > query.limit ? page.at(-1)!.id : null };
  }

  keepEnded(): void {
    this.#keep(this.#rate.ended());
  }

  #keep(events: NewAuditEvent[]): void {
    if (events.length === 0) return;
    for (const { type, email, userId, address, requestId, detail } of events)
      this.logger[type === 'login.throttled' ? 'warn' : 'info']({
        event: type,
        ...(email !== null && { email: cut(email) }),
        ...(userId !== null && { userId }),
        address: cut(address),
        reqId: requestId,
        detail,
      });
    this.keeper.keep(events);
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

/** As PostgreSQL can store it: U+0000 and halves of surrogate pairs become U+FFFD. */
const storable = (text: string) =>
  text.replace(/\p{Cs}/gu, '\uFFFD').replaceAll('\u0000', '\uFFFD');

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** `text` in at most LOGGED_BYTES of a JSON line (escapes counted), cut with an ellipsis. */
function cut(text: string): string {
  if (jsonBytes(text) <= LOGGED_BYTES) return text;
  let end = 0;
  let size = jsonBytes('…');
  for (const char of text) {
    size += jsonBytes(char);
    if (size > LOGGED_BYTES) break;
    end += char.length;
  }
  return `${text.slice(0, end)}…`;
}

/**
 * The trail in this process: within the retention, at most `maxEvents`, oldest dropped first. Ids
 * are consecutive from 1 at each start, so an event's place follows from its id.
 */
export class AuditRing implements AuditKeeper {
  /** Oldest first; the slots before #head are dropped, released when the array is compacted. */
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
    const first = this.#events[this.#head]?.id ?? 0;
    const end = before === undefined ? this.size : Math.max(0, Math.min(this.size, before - first));
    const found: AuditEvent[] = [];
    for (let at = this.#head + end - 1; at >= this.#head && found.length < limit; at--) {
      const event = this.#events[at]!;
      if ((type ?? event.type) === event.type && (email ?? event.email) === event.email)
        found.push(event);
    }
    return found;
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

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
