import type { AuthConfig, Edge } from '../config.js';
import type { JsonSchema } from '../http/route.js';
import type { SessionView, Settings } from '../../web/src/pageState.js';
import type { Accounts } from './accounts.js';
import { AUDIT_EVENT_TYPES, type AuditTrail } from './auditLog.js';
import { AUDIT_RATE, MANY_ADDRESSES } from './auditRate.js';
import { WAITING_PER_ADDRESS } from './login.js';
import { LOGIN_LIMITS, type LoginLimits } from './limits.js';
import type { SessionInfo, SessionStore } from './sessions.js';

// How the login service shows what it keeps: each JSON Schema is the OpenAPI document's, each type
// the pages' own. An object has every property required; titled, it is a component, unless nested.
export const object = (title: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  title,
  properties,
  required: Object.keys(properties),
});
export const ok = (description: string, schema: JsonSchema) => ({ 200: { description, schema } });

const [TEXT, INTEGER, BOOLEAN] = [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }];
const TIME = { type: 'string', format: 'date-time' };
const orNull = (schema: JsonSchema) => ({ ...schema, type: [schema.type, 'null'] });
const listOf = (items: JsonSchema) => ({ type: 'array', items });
const integers = (...names: string[]) => Object.fromEntries(names.map((name) => [name, INTEGER]));
const describe = (meanings: Record<string, string>) =>
  Object.entries(meanings)
    .map(([value, meaning]) => `\`${value}\`: ${meaning}`)
    .join('; ');

export const SessionList = listOf(
  object('Session', {
    id: { type: 'string', format: 'uuid' },
    createdAt: TIME,
    lastSeenAt: { ...TIME, description: 'Updated at most once a minute' },
    expiresAt: TIME,
    address: TEXT,
    userAgent: TEXT,
    current: { ...BOOLEAN, description: 'Whether it is the session of this request' },
  }),
);

const USER = { id: TEXT, email: TEXT, role: { enum: ['user', 'admin'] } };
export const UserView = object('User', USER);

/** Every account, in the order of configuration, with its sessions and `more`. */
const everyAccount = (title: string, item: string, more: Record<string, JsonSchema> = {}) =>
  object(title, { users: listOf(object(item, { ...USER, sessions: SessionList, ...more })) });

export const AccountSessionsView = everyAccount('AccountSessions', 'AccountWithSessions');

/** A security event: never a password, token or cookie. */
const AuditEvent = object('AuditEvent', {
  id: { ...INTEGER, minimum: 1 },
  time: TIME,
  type: { enum: Object.keys(AUDIT_EVENT_TYPES), description: describe(AUDIT_EVENT_TYPES) },
  email: orNull(TEXT),
  userId: orNull(TEXT),
  address: { ...TEXT, description: `\`${MANY_ADDRESSES}\`: a summary of many addresses` },
  userAgent: TEXT,
  requestId: TEXT,
  detail: {
    type: 'object',
    description: '`count`: how many events a summary stands for',
    additionalProperties: { type: ['string', 'number', 'boolean'] },
  },
});

export const AuditPage = object('AuditPage', {
  events: listOf(AuditEvent),
  next: { ...orNull(INTEGER), description: 'The `before` of the next page; null: none' },
});

const Throttle = object('AccountThrottle', {
  blocked: BOOLEAN,
  failures: { ...INTEGER, minimum: 0 },
  retryAfterSeconds: { ...orNull(INTEGER), minimum: 1, description: 'null: not blocked' },
});
export const Unlocked = object('Unlocked', { cleared: Throttle });
export const AccountsOverviewView = everyAccount('AccountsOverview', 'AccountOverview', {
  throttle: Throttle,
  events: listOf(AuditEvent),
});

export const SettingsView = object('Settings', {
  sessions: object('SessionSettings', {
    store: { enum: ['memory', 'postgres'] },
    ...integers('ttlSeconds', 'max', 'maxPerUser'),
  }),
  throttling: object(
    'ThrottlingSettings',
    integers(
      ...['perPair', 'pairWindowSeconds', 'perAccount', 'accountWindowSeconds', 'perAddress'],
      ...['addressWindowSeconds', 'waitingPerAddress', 'deviceTrustDays'],
    ),
  ),
  audit: object(
    'AuditSettings',
    integers('retentionDays', 'maxEvents', 'perClient', 'windowSeconds', 'maxClients'),
  ),
  trustProxy: { oneOf: [INTEGER, listOf(TEXT), { type: 'null' }] },
  allowedHosts: { oneOf: [listOf(TEXT), { type: 'null' }] },
  production: BOOLEAN,
  passwordHashCost: INTEGER,
});

export const presentSession = (session: SessionInfo, currentId: string): SessionView => {
  const { id, createdAt, lastSeenAt, expiresAt, address, userAgent } = session;
  return { id, createdAt, lastSeenAt, expiresAt, address, userAgent, current: id === currentId };
};

/** The latest events the users page shows of each account. */
const RECENT_EVENTS = 20;

type Parts = { accounts: Accounts; sessions: SessionStore; limits: LoginLimits; audit: AuditTrail };

/** What administrators see, in the admin API and in the admin pages alike; never a secret. */
export function adminViews(parts: Parts, config: AuthConfig, edge: Edge) {
  const { accounts, sessions, limits, audit } = parts;
  const withSessions = async (currentSessionId: string) => {
    const live = await sessions.list();
    return accounts.all().map((user) => {
      const own = live.filter((session) => session.userId === user.id);
      return { ...user, sessions: own.map((session) => presentSession(session, currentSessionId)) };
    });
  };
  const overview = async (currentSessionId: string) =>
    Promise.all(
      (await withSessions(currentSessionId)).map(async (user) => ({
        ...user,
        throttle: await limits.state('account', user.id),
        events: (await audit.list({ limit: RECENT_EVENTS, email: user.email })).events,
      })),
    );
  const { pair, account, address } = LOGIN_LIMITS;
  const { perClient, windowMs, maxClients } = AUDIT_RATE;
  const { store, ttlSeconds, max, maxPerUser } = config.sessions;
  const settings: Settings = {
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
    audit: { ...config.audit, perClient, windowSeconds: windowMs / 1000, maxClients },
    trustProxy: edge.trustProxy ?? null,
    allowedHosts: edge.allowedHosts ?? null,
    production: edge.production,
    passwordHashCost: config.passwordHashCost,
  };
  return { accounts: withSessions, overview, settings };
}
