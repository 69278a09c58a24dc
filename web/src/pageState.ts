/**
 * What the server knows about a page when it sends it: which page, the signed-in user its
 * session check found, and what the page shows. The server renders the page from it and writes
 * it into the document, where the browser reads it back to hydrate the same tree. The shapes are
 * those of the login service's API (its OpenAPI document), which the pages also call.
 */
export type Role = 'user' | 'admin';

export interface User {
  id: string;
  email: string;
  role: Role;
}

/** A live session, never its token (`GET /api/sessions`, `GET /api/admin/sessions`). */
export interface SessionView {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  address: string;
  userAgent: string;
  /** Whether it is the session of the request that asked. */
  current: boolean;
}

export interface AccountSessions extends User {
  sessions: SessionView[];
}

export type AuditEventType =
  | 'login.succeeded'
  | 'login.failed'
  | 'login.throttled'
  | 'logout'
  | 'session.ended'
  | 'account.unlocked';

/**
 * A security event of the audit trail (`GET /api/admin/audit`); never a password, token or cookie.
 */
export interface AuditEventView {
  id: number;
  /** ISO 8601, UTC. */
  time: string;
  type: AuditEventType;
  /** The email a login tried, or the account's, in lower case; null when the request named none. */
  email: string | null;
  /** The account's id, when the event is about a configured account. */
  userId: string | null;
  address: string;
  userAgent: string;
  requestId: string;
  /** What the event says of itself; `count`: how many events a summary stands for. */
  detail: Record<string, string | number | boolean>;
}

/**
 * An account's login throttling as it stands (`DELETE /api/admin/users/{id}/throttle` answers what
 * it cleared).
 */
export interface AccountThrottle {
  /** Whether untrusted clients are refused for the account (its limit, all addresses together). */
  blocked: boolean;
  /** Its failures from untrusted clients in their window, counted up to the limit. */
  failures: number;
  retryAfterSeconds: number | null;
}

/**
 * An account as the users page shows it (`GET /api/admin/users`): its sessions, its login
 * throttling, its latest events.
 */
export interface AccountOverview extends AccountSessions {
  throttle: AccountThrottle;
  /** Newest first. */
  events: AuditEventView[];
}

/** The effective settings an administrator may read (`GET /api/admin/settings`). */
export interface Settings {
  sessions: { store: 'memory' | 'postgres'; ttlSeconds: number; max: number; maxPerUser: number };
  throttling: {
    perPair: number;
    pairWindowSeconds: number;
    perAccount: number;
    accountWindowSeconds: number;
    perAddress: number;
    addressWindowSeconds: number;
    waitingPerAddress: number;
    deviceTrustDays: number;
  };
  /**
   * The audit trail's bounds (AUDIT_RETENTION_DAYS, AUDIT_MAX_EVENTS) and the rate past which
   * events are counted.
   */
  audit: {
    retentionDays: number;
    maxEvents: number;
    perClient: number;
    windowSeconds: number;
    maxClients: number;
  };
  trustProxy: number | string[] | null;
  allowedHosts: string[] | null;
  production: boolean;
  passwordHashCost: number;
}

export type PageState =
  | { page: 'login' }
  | { page: 'dashboard'; user: User }
  | { page: 'users'; user: User; accounts: AccountOverview[] }
  | { page: 'settings'; user: User; settings: Settings }
  /** An administrators' page asked for by a user who is not one. */
  | { page: 'forbidden'; user: User };

/** The element of the document that carries the state, as JSON. */
export const STATE_ELEMENT_ID = 'page-state';
