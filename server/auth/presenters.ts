import type { Edge } from '../config.js';
import type { JsonSchema } from '../http/route.js';
import type {
  AccountOverview,
  AccountSessions,
  AccountThrottle,
  SessionView as Session,
  Settings,
} from '../../web/src/pageState.js';
import type { Accounts, User } from './accounts.js';
import { AUDIT_EVENT_TYPES, type AuditLimits, type AuditTrail } from './auditLog.js';
import { MANY_ADDRESSES, type AuditRate } from './auditRate.js';
import type { LOGIN_LIMITS, LimitState, LoginLimits } from './limits.js';
import type { SessionInfo, SessionStore } from './sessions.js';

/**
 * How the login service shows sessions, accounts, their login throttling, security events and
 * settings: in its API (each JSON Schema is the OpenAPI document's) and in its pages (the types
 * are the pages' own).
 */

/** The latest events the users page shows of each account. */
const RECENT_EVENTS = 20;

/**
 * A session as its owner and administrators see it: when, from where, with what; never its token.
 */
export const SessionView: JsonSchema = {
  type: 'object',
  title: 'Session',
  properties: {
    id: { type: 'string', format: 'uuid' },
    createdAt: { type: 'string', format: 'date-time' },
    lastSeenAt: {
      type: 'string',
      format: 'date-time',
      description: 'Updated at most once a minute',
    },
    expiresAt: { type: 'string', format: 'date-time' },
    address: {
      type: 'string',
      description: 'The client address it was opened from',
      examples: ['203.0.113.7'],
    },
    userAgent: {
      type: 'string',
      description: 'The browser it was opened with (at most 256 characters)',
    },
    current: { type: 'boolean', description: 'Whether it is the session of this request' },
  },
  required: ['id', 'createdAt', 'lastSeenAt', 'expiresAt', 'address', 'userAgent', 'current'],
};

export function presentSession(
  { id, createdAt, lastSeenAt, expiresAt, address, userAgent }: SessionInfo,
  currentId: string,
): Session {
  return { id, createdAt, lastSeenAt, expiresAt, address, userAgent, current: id === currentId };
}

export const sessionList = (description: string): JsonSchema => ({
  type: 'array',
  description,
  items: SessionView,
});

const accountWithSessions = {
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    role: { enum: ['user', 'admin'] },
    sessions: sessionList('Its live sessions, oldest first'),
  },
  required: ['id', 'email', 'role', 'sessions'],
};

/** Every account, in the order of configuration, each as `account` shows it. */
const everyAccount = (title: string, account: JsonSchema): JsonSchema => ({
  type: 'object',
  title,
  properties: {
    users: {
      type: 'array',
      description: 'Every account, in the order of configuration',
      items: account,
    },
  },
  required: ['users'],
});

export const AccountSessionsView = everyAccount('AccountSessions', {
  type: 'object',
  title: 'AccountWithSessions',
  ...accountWithSessions,
});

/** A security event: what happened, to whom, from where; never a password, token or cookie. */
export const AuditEventView: JsonSchema = {
  type: 'object',
  title: 'AuditEvent',
  properties: {
    id: {
      type: 'integer',
      minimum: 1,
      description: 'Grows with each event kept: the `before` of the next page',
    },
    time: {
      type: 'string',
      format: 'date-time',
      description: 'When it happened (for a summary: its first event)',
    },
    type: {
      enum: Object.keys(AUDIT_EVENT_TYPES),
      description: Object.entries(AUDIT_EVENT_TYPES)
        .map(([type, meaning]) => `\`${type}\`: ${meaning}`)
        .join('; '),
    },
    email: {
      type: ['string', 'null'],
      description:
        "The email the login tried, or the account's, in lower case; null when the request named none",
    },
    userId: {
      type: ['string', 'null'],
      description: 'The account, when the event is about a configured one',
    },
    address: {
      type: 'string',
      description: `The client's address; \`${MANY_ADDRESSES}\` for a summary of many addresses`,
      examples: ['203.0.113.7'],
    },
    userAgent: { type: 'string', description: 'The browser (at most 256 characters)' },
    requestId: { type: 'string', description: 'The X-Request-Id of the request it came with' },
    detail: {
      type: 'object',
      description:
        'What the event says of itself: `reason` of a failed login, `limit` and `retryAfterSeconds` of a refusal, `by`, `adminId`, `cap` and `ended` of sessions ended, what an unlock cleared; `count`: how many events of its type and address a summary stands for',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    },
  },
  required: [
    'id',
    'time',
    'type',
    'email',
    'userId',
    'address',
    'userAgent',
    'requestId',
    'detail',
  ],
};

export const AuditPage: JsonSchema = {
  type: 'object',
  title: 'AuditPage',
  properties: {
    events: { type: 'array', description: 'Newest first', items: AuditEventView },
    next: {
      type: ['integer', 'null'],
      description: 'The `before` of the next page; null on the last',
    },
  },
  required: ['events', 'next'],
};

const seconds = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const secondsLeft: JsonSchema = {
  type: ['integer', 'null'],
  minimum: 1,
  description: 'Seconds until it is admitted again; null: not blocked',
};

export const AccountThrottleView: JsonSchema = {
  type: 'object',
  title: 'AccountThrottle',
  description:
    "The account's limit for untrusted clients, all addresses together (failures counted up to the limit); each address's own limit for the account is not listed",
  properties: {
    blocked: { type: 'boolean', description: 'Whether untrusted clients are refused for it' },
    failures: { type: 'integer', minimum: 0 },
    retryAfterSeconds: secondsLeft,
  },
  required: ['blocked', 'failures', 'retryAfterSeconds'],
};

export const AccountsOverviewView = everyAccount('AccountsOverview', {
  type: 'object',
  title: 'AccountOverview',
  properties: {
    ...accountWithSessions.properties,
    throttle: AccountThrottleView,
    events: {
      type: 'array',
      description: `Its latest security events, newest first (at most ${RECENT_EVENTS})`,
      items: AuditEventView,
    },
  },
  required: [...accountWithSessions.required, 'throttle', 'events'],
});

/** An account's login throttling as the API and the users page show it. */
export const presentThrottle = ({ failures, retryAfterSeconds }: LimitState): AccountThrottle => ({
  blocked: retryAfterSeconds !== null,
  failures,
  retryAfterSeconds,
});

/**
 * What governs sessions, logins, the audit trail and the edge, as the service runs with it; never a
 * secret.
 */
export interface EffectiveSettings {
  sessions: Settings['sessions'];
  limits: typeof LOGIN_LIMITS;
  waitingPerAddress: number;
  audit: AuditLimits & { rate: AuditRate };
  deviceTrustDays: number;
  edge: Edge;
  passwordHashCost: number;
}

export const SettingsView: JsonSchema = {
  type: 'object',
  title: 'Settings',
  properties: {
    sessions: {
      type: 'object',
      properties: {
        store: { enum: ['memory', 'postgres'], description: 'SESSION_STORE' },
        ttlSeconds: seconds('SESSION_TTL_SECONDS'),
        max: { type: 'integer', description: 'SESSION_MAX' },
        maxPerUser: { type: 'integer', description: 'SESSION_MAX_PER_USER' },
      },
      required: ['store', 'ttlSeconds', 'max', 'maxPerUser'],
    },
    throttling: {
      type: 'object',
      properties: {
        perPair: {
          type: 'integer',
          description: 'Failures of one account from one address or trusted device per window',
        },
        pairWindowSeconds: seconds('The window of perPair'),
        perAccount: {
          type: 'integer',
          description: 'Failures of one account from untrusted clients per window',
        },
        accountWindowSeconds: seconds('The window of perAccount'),
        perAddress: {
          type: 'integer',
          description:
            'Failures from one client address (an IPv6 /64), all accounts and unknown emails together, per window',
        },
        addressWindowSeconds: seconds('The window of perAddress'),
        waitingPerAddress: {
          type: 'integer',
          description:
            'Password checks one client address may have waiting, per process; past it the address is refused',
        },
        deviceTrustDays: {
          type: 'integer',
          description: 'DEVICE_TRUST_DAYS: days a device cookie is trusted after its login',
        },
      },
      required: [
        'perPair',
        'pairWindowSeconds',
        'perAccount',
        'accountWindowSeconds',
        'perAddress',
        'addressWindowSeconds',
        'waitingPerAddress',
        'deviceTrustDays',
      ],
    },
    audit: {
      type: 'object',
      properties: {
        retentionDays: {
          type: 'integer',
          description: 'AUDIT_RETENTION_DAYS: days a security event is kept',
        },
        maxEvents: {
          type: 'integer',
          description: 'AUDIT_MAX_EVENTS: the most security events kept',
        },
        perClient: {
          type: 'integer',
          description:
            'Events of one type from one client address kept one by one per window; past it they are counted',
        },
        windowSeconds: seconds('The window of perClient'),
        maxClients: {
          type: 'integer',
          description:
            'Types and client addresses tracked per window; past it the events of other addresses are counted together',
        },
      },
      required: ['retentionDays', 'maxEvents', 'perClient', 'windowSeconds', 'maxClients'],
    },
    trustProxy: {
      description:
        'TRUST_PROXY: hops, or the addresses and subnets whose forwarding headers are believed; null: none',
      oneOf: [{ type: 'integer' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }],
    },
    allowedHosts: {
      description: 'AUTH_ALLOWED_HOSTS; null: any host',
      oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }],
    },
    production: {
      type: 'boolean',
      description: 'NODE_ENV=production: cookies are Secure, HSTS is sent',
    },
    passwordHashCost: { type: 'integer', description: 'PASSWORD_HASH_COST (scrypt N)' },
  },
  required: [
    'sessions',
    'throttling',
    'audit',
    'trustProxy',
    'allowedHosts',
    'production',
    'passwordHashCost',
  ],
};

function presentSettings({
  sessions,
  limits,
  waitingPerAddress,
  audit,
  deviceTrustDays,
  edge,
  passwordHashCost,
}: EffectiveSettings): Settings {
  return {
    sessions,
    throttling: {
      perPair: limits.pair.points,
      pairWindowSeconds: limits.pair.duration,
      perAccount: limits.account.points,
      accountWindowSeconds: limits.account.duration,
      perAddress: limits.address.points,
      addressWindowSeconds: limits.address.duration,
      waitingPerAddress,
      deviceTrustDays,
    },
    audit: {
      retentionDays: audit.retentionDays,
      maxEvents: audit.maxEvents,
      perClient: audit.rate.perClient,
      windowSeconds: audit.rate.windowMs / 1000,
      maxClients: audit.rate.maxClients,
    },
    trustProxy: edge.trustProxy ?? null,
    allowedHosts: edge.allowedHosts ?? null,
    production: edge.production,
    passwordHashCost,
  };
}

/**
 * Every account, in the order of configuration, each with its live sessions (from `live`, oldest
 * first).
 */
function presentAccounts(
  accounts: User[],
  live: SessionInfo[],
  currentId: string,
): AccountSessions[] {
  return accounts.map((user) => ({
    ...user,
    sessions: live
      .filter((session) => session.userId === user.id)
      .map((session) => presentSession(session, currentId)),
  }));
}

/** What administrators see, in the admin API and in the admin pages alike. */
export interface AdminViews {
  /** Every account with its live sessions, marking the one of the session asking. */
  accounts(currentSessionId: string): Promise<AccountSessions[]>;
  /** The same, each with its login throttling and its latest security events (the users page). */
  overview(currentSessionId: string): Promise<AccountOverview[]>;
  settings: Settings;
}

export interface AdminViewsDeps {
  accounts: Accounts;
  sessions: SessionStore;
  limits: LoginLimits;
  audit: AuditTrail;
  settings: EffectiveSettings;
}

export function adminViews({
  accounts,
  sessions,
  limits,
  audit,
  settings,
}: AdminViewsDeps): AdminViews {
  const shown = presentSettings(settings);
  const withSessions = async (currentSessionId: string) =>
    presentAccounts(accounts.all(), await sessions.list(), currentSessionId);
  return {
    accounts: withSessions,
    overview: async (currentSessionId) =>
      Promise.all(
        (await withSessions(currentSessionId)).map(async (account) => {
          const [state, { events }] = await Promise.all([
            limits.state('account', account.id),
            audit.list({ limit: RECENT_EVENTS, email: account.email }),
          ]);
          return { ...account, throttle: presentThrottle(state), events };
        }),
      ),
    settings: shown,
  };
}
