import type { Edge } from '../shared/config.js';
import type { JsonSchema } from '../shared/route.js';
import type { AccountSessions, SessionView as Session, Settings } from '../../web/src/pageState.js';
import type { Accounts, User } from './accounts.js';
import type { SessionInfo, SessionStore } from './sessions.js';
import type { AddressLimits } from './addressBudget.js';
import type { ThrottleLimits } from './throttle.js';

/**
 * How the login service shows sessions, accounts and settings: in its API (each JSON Schema is
 * the OpenAPI document's) and in its pages (the types are the pages' own).
 */

/** A session as its owner and administrators see it: when, from where, with what; never its token. */
export const SessionView: JsonSchema = {
  type: 'object',
  title: 'Session',
  properties: {
    id: { type: 'string', format: 'uuid' },
    createdAt: { type: 'string', format: 'date-time' },
    lastSeenAt: { type: 'string', format: 'date-time', description: 'Updated at most once a minute' },
    expiresAt: { type: 'string', format: 'date-time' },
    address: { type: 'string', description: 'The client address it was opened from', examples: ['203.0.113.7'] },
    userAgent: { type: 'string', description: 'The browser it was opened with (at most 256 characters)' },
    current: { type: 'boolean', description: 'Whether it is the session of this request' },
  },
  required: ['id', 'createdAt', 'lastSeenAt', 'expiresAt', 'address', 'userAgent', 'current'],
};

export function presentSession({ id, createdAt, lastSeenAt, expiresAt, address, userAgent }: SessionInfo, currentId: string): Session {
  return { id, createdAt, lastSeenAt, expiresAt, address, userAgent, current: id === currentId };
}

export const sessionList = (description: string): JsonSchema => ({ type: 'array', description, items: SessionView });

export const AccountSessionsView: JsonSchema = {
  type: 'object',
  title: 'AccountSessions',
  properties: {
    users: {
      type: 'array',
      description: 'Every account, in the order of configuration',
      items: {
        type: 'object',
        title: 'AccountWithSessions',
        properties: {
          id: { type: 'string' },
          email: { type: 'string' },
          role: { enum: ['user', 'admin'] },
          sessions: sessionList('Its live sessions, oldest first'),
        },
        required: ['id', 'email', 'role', 'sessions'],
      },
    },
  },
  required: ['users'],
};

const seconds = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

/** What governs sessions, logins and the edge, as the service runs with it; never a secret. */
export interface EffectiveSettings {
  sessions: Settings['sessions'];
  throttling: ThrottleLimits;
  addresses: AddressLimits;
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
        perPair: { type: 'integer', description: 'Failures of one account from one address or trusted device per window' },
        pairWindowSeconds: seconds('The window of perPair'),
        perAccount: { type: 'integer', description: 'Failures of one account from untrusted clients per window' },
        accountWindowSeconds: seconds('The window of perAccount'),
        perAddress: { type: 'integer', description: 'Failures from one client address (an IPv6 /64), all accounts and unknown emails together, per window' },
        addressWindowSeconds: seconds('The window of perAddress'),
        atOncePerAddress: { type: 'integer', description: 'Login attempts one client address may have in progress at once, per process' },
        deviceTrustDays: { type: 'integer', description: 'DEVICE_TRUST_DAYS: days a device cookie is trusted after its login' },
      },
      required: ['perPair', 'pairWindowSeconds', 'perAccount', 'accountWindowSeconds', 'perAddress', 'addressWindowSeconds', 'atOncePerAddress', 'deviceTrustDays'],
    },
    trustProxy: {
      description: 'TRUST_PROXY: hops, or the addresses and subnets whose forwarding headers are believed; null: none',
      oneOf: [{ type: 'integer' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }],
    },
    allowedHosts: {
      description: 'AUTH_ALLOWED_HOSTS; null: any host',
      oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }],
    },
    production: { type: 'boolean', description: 'NODE_ENV=production: cookies are Secure, HSTS is sent' },
    passwordHashCost: { type: 'integer', description: 'PASSWORD_HASH_COST (scrypt N)' },
  },
  required: ['sessions', 'throttling', 'trustProxy', 'allowedHosts', 'production', 'passwordHashCost'],
};

function presentSettings({ sessions, throttling, addresses, deviceTrustDays, edge, passwordHashCost }: EffectiveSettings): Settings {
  return {
    sessions,
    throttling: {
      perPair: throttling.perPair,
      pairWindowSeconds: throttling.pairWindowMs / 1000,
      perAccount: throttling.perAccount,
      accountWindowSeconds: throttling.accountWindowMs / 1000,
      perAddress: addresses.perAddress,
      addressWindowSeconds: addresses.windowMs / 1000,
      atOncePerAddress: addresses.atOnce,
      deviceTrustDays,
    },
    trustProxy: edge.trustProxy ?? null,
    allowedHosts: edge.allowedHosts ?? null,
    production: edge.production,
    passwordHashCost,
  };
}

/** Every account, in the order of configuration, each with its live sessions (from `live`, oldest first). */
function presentAccounts(accounts: User[], live: SessionInfo[], currentId: string): AccountSessions[] {
  return accounts.map((user) => ({
    ...user,
    sessions: live.filter((session) => session.userId === user.id).map((session) => presentSession(session, currentId)),
  }));
}

/** What administrators see, in the admin API and in the admin pages alike. */
export interface AdminViews {
  /** Every account with its live sessions, marking the one of the session asking. */
  accounts(currentSessionId: string): Promise<AccountSessions[]>;
  settings: Settings;
}

export function adminViews(accounts: Accounts, sessions: SessionStore, settings: EffectiveSettings): AdminViews {
  const shown = presentSettings(settings);
  return {
    accounts: async (currentSessionId) => presentAccounts(accounts.all(), await sessions.list(), currentSessionId),
    settings: shown,
  };
}
