import type { AuthConfig, Edge } from '../config.js';
import type { JsonSchema } from '../http/route.js';
import type { AccountThrottle, SessionView as Session, Settings } from '../../web/src/pageState.js';
import type { Accounts } from './accounts.js';
import { AUDIT_EVENT_TYPES, type AuditTrail } from './auditLog.js';
import { AUDIT_RATE, MANY_ADDRESSES } from './auditRate.js';
import { WAITING_PER_ADDRESS } from './checkQueue.js';
import { LOGIN_LIMITS, type LimitState, type LoginLimits } from './limits.js';
import type { SessionInfo, SessionStore } from './sessions.js';

// How the login service shows what it keeps: each JSON Schema is the OpenAPI document's, each type
// the pages' own.

/** The latest events the users page shows of each account. */
const RECENT_EVENTS = 20;

/** An object with every property required (a component of the document, unless nested). */
export const object = (title: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  title,
  properties,
  required: Object.keys(properties),
});

const TIME = { type: 'string', format: 'date-time' };
const ADDRESS = { type: 'string', examples: ['203.0.113.7'] };
const USER_AGENT = { type: 'string', description: 'The browser (at most 256 characters)' };
const integer = (description: string) => ({ type: 'integer', description });
const seconds = (description: string) => ({ type: 'integer', minimum: 0, description });
const listOf = (items: JsonSchema, description: string) => ({ type: 'array', description, items });

export const SessionView = object('Session', {
  id: { type: 'string', format: 'uuid' },
  createdAt: TIME,
  lastSeenAt: { ...TIME, description: 'Updated at most once a minute' },
  expiresAt: TIME,
  address: { ...ADDRESS, description: 'The client address it was opened from' },
  userAgent: USER_AGENT,
  current: { type: 'boolean', description: 'Whether it is the session of this request' },
});

export const SessionList = listOf(SessionView, 'Live sessions, oldest first');

const USER = {
  id: { type: 'string' },
  email: { type: 'string', examples: ['user@example.com'] },
  role: { enum: ['user', 'admin'] },
};
export const UserView = object('User', USER);
const WITH_SESSIONS = { ...USER, sessions: SessionList };

const everyAccount = (title: string, account: JsonSchema) =>
  object(title, { users: listOf(account, 'Every account, in the order of configuration') });

export const AccountSessionsView = everyAccount(
  'AccountSessions',
  object('AccountWithSessions', WITH_SESSIONS),
);

/** A security event: never a password, token or cookie. */
export const AuditEventView = object('AuditEvent', {
  id: { type: 'integer', minimum: 1, description: 'Grows with each event kept' },
  time: { ...TIME, description: 'For a summary: its first event' },
  type: {
    enum: Object.keys(AUDIT_EVENT_TYPES),
    description: Object.entries(AUDIT_EVENT_TYPES)
      .map(([type, meaning]) => `\`${type}\`: ${meaning}`)
      .join('; '),
  },
  email: { type: ['string', 'null'], description: "The email tried, or the account's, lower case" },
  userId: { type: ['string', 'null'], description: 'The account, when it is a configured one' },
  address: { ...ADDRESS, description: `\`${MANY_ADDRESSES}\`: a summary of many addresses` },
  userAgent: USER_AGENT,
  requestId: { type: 'string', description: 'The X-Request-Id of its request' },
  detail: {
    type: 'object',
    description: 'What the event says of itself; `count`: how many events a summary stands for',
    additionalProperties: { type: ['string', 'number', 'boolean'] },
  },
});

export const AuditPage = object('AuditPage', {
  events: listOf(AuditEventView, 'Newest first'),
  next: { type: ['integer', 'null'], description: 'The `before` of the next page; null: the last' },
});

export const AccountThrottleView = {
  ...object('AccountThrottle', {
    blocked: { type: 'boolean' },
    failures: { type: 'integer', minimum: 0 },
    retryAfterSeconds: { type: ['integer', 'null'], minimum: 1, description: 'null: not blocked' },
  }),
  description: "The account's limit for untrusted clients, all addresses together",
};

export const AccountsOverviewView = everyAccount(
  'AccountsOverview',
  object('AccountOverview', {
    ...WITH_SESSIONS,
    throttle: AccountThrottleView,
    events: listOf(AuditEventView, `Its latest events, newest first (at most ${RECENT_EVENTS})`),
  }),
);

export const SettingsView = object('Settings', {
  sessions: object('SessionSettings', {
    store: { enum: ['memory', 'postgres'], description: 'SESSION_STORE' },
    ttlSeconds: seconds('SESSION_TTL_SECONDS'),
    max: integer('SESSION_MAX'),
    maxPerUser: integer('SESSION_MAX_PER_USER'),
  }),
  throttling: object('ThrottlingSettings', {
    perPair: integer('Failures of one account from one address or trusted device per window'),
    pairWindowSeconds: seconds('The window of perPair'),
    perAccount: integer('Failures of one account from untrusted clients per window'),
    accountWindowSeconds: seconds('The window of perAccount'),
    perAddress: integer('Failures from one client address (an IPv6 /64) per window'),
    addressWindowSeconds: seconds('The window of perAddress'),
    waitingPerAddress: integer('Password checks one client address may have waiting'),
    deviceTrustDays: integer('DEVICE_TRUST_DAYS'),
  }),
  audit: object('AuditSettings', {
    retentionDays: integer('AUDIT_RETENTION_DAYS'),
    maxEvents: integer('AUDIT_MAX_EVENTS'),
    perClient: integer('Events of one type and address kept one by one per window'),
    windowSeconds: seconds('The window of perClient'),
    maxClients: integer('Types and addresses told apart per window'),
  }),
  trustProxy: {
    description: 'TRUST_PROXY; null: none',
    oneOf: [{ type: 'integer' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }],
  },
  allowedHosts: {
    description: 'AUTH_ALLOWED_HOSTS; null: any host',
    oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }],
  },
  production: { type: 'boolean', description: 'NODE_ENV=production' },
  passwordHashCost: integer('PASSWORD_HASH_COST'),
});

export function presentSession(
  { id, createdAt, lastSeenAt, expiresAt, address, userAgent }: SessionInfo,
  currentId: string,
): Session {
  return { id, createdAt, lastSeenAt, expiresAt, address, userAgent, current: id === currentId };
}

export const presentThrottle = ({ failures, retryAfterSeconds }: LimitState): AccountThrottle => ({
  blocked: retryAfterSeconds !== null,
  failures,
  retryAfterSeconds,
});

/** What governs sessions, logins, the audit trail and the edge; never a secret. */
export function presentSettings(config: AuthConfig, edge: Edge): Settings {
  const { store, ttlSeconds, max, maxPerUser } = config.sessions;
  const { pair, account, address } = LOGIN_LIMITS;
  return {
    sessions: { store, ttlSeconds, max, maxPerUser },
    throttling: {
      perPair: pair.points,
      pairWindowSeconds: pair.duration,
      perAccount: account.points,
      accountWindowSeconds: account.duration,
      perAddress: address.points,
      addressWindowSeconds: address.duration,
      waitingPerAddress: WAITING_PER_ADDRESS,
      deviceTrustDays: config.deviceTrustDays,
    },
    audit: {
      retentionDays: config.audit.retentionDays,
      maxEvents: config.audit.maxEvents,
      perClient: AUDIT_RATE.perClient,
      windowSeconds: AUDIT_RATE.windowMs / 1000,
      maxClients: AUDIT_RATE.maxClients,
    },
    trustProxy: edge.trustProxy ?? null,
    allowedHosts: edge.allowedHosts ?? null,
    production: edge.production,
    passwordHashCost: config.passwordHashCost,
  };
}

/** What administrators see, in the admin API and in the admin pages alike. */
export function adminViews(
  parts: { accounts: Accounts; sessions: SessionStore; limits: LoginLimits; audit: AuditTrail },
  settings: Settings,
) {
  const { accounts, sessions, limits, audit } = parts;
  // Every account with its live sessions, marking the one of the session asking.
  const withSessions = async (currentSessionId: string) => {
    const live = await sessions.list();
    return accounts.all().map((user) => ({
      ...user,
      sessions: live
        .filter((session) => session.userId === user.id)
        .map((session) => presentSession(session, currentSessionId)),
    }));
  };
  return {
    accounts: withSessions,
    overview: async (currentSessionId: string) =>
      Promise.all(
        (await withSessions(currentSessionId)).map(async (account) => {
          const [state, { events }] = await Promise.all([
            limits.state('account', account.id),
            audit.list({ limit: RECENT_EVENTS, email: account.email }),
          ]);
          return { ...account, throttle: presentThrottle(state), events };
        }),
      ),
    settings,
  };
}

export type AdminViews = ReturnType<typeof adminViews>;
