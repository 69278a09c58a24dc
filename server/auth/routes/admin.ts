import * as yup from 'yup';
import type { Edge } from '../../shared/config.js';
import { forbidden, notFound } from '../../shared/errors.js';
import { route, type JsonSchema } from '../../shared/route.js';
import type { Accounts } from '../accounts.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { requireAdmin, type SessionStore, type SignedInCheck } from '../sessions.js';
import { presentSession, sessionList } from '../sessionView.js';
import type { ThrottleLimits } from '../throttle.js';
import { Ended, notAdmin, notAdminOrCrossSite, SessionId, signedOut } from './outcomes.js';

/** The settings an administrator may read: what governs sessions, logins and the edge; never a secret. */
export interface Settings {
  sessions: { store: 'memory' | 'postgres'; ttlSeconds: number; max: number; maxPerUser: number };
  throttling: ThrottleLimits;
  edge: Edge;
  passwordHashCost: number;
}

export interface AdminRoutesDeps {
  accounts: Accounts;
  sessions: SessionStore;
  signedIn: SignedInCheck;
  settings: Settings;
}

const UserId = yup.object({ id: yup.string().required() });

const AccountSessions: JsonSchema = {
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

const SettingsView: JsonSchema = {
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
      },
      required: ['perPair', 'pairWindowSeconds', 'perAccount', 'accountWindowSeconds'],
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

function presentSettings({ sessions, throttling, edge, passwordHashCost }: Settings) {
  return {
    sessions,
    throttling: {
      perPair: throttling.perPair,
      pairWindowSeconds: throttling.pairWindowMs / 1000,
      perAccount: throttling.perAccount,
      accountWindowSeconds: throttling.accountWindowMs / 1000,
    },
    trustProxy: edge.trustProxy ?? null,
    allowedHosts: edge.allowedHosts ?? null,
    production: edge.production,
    passwordHashCost,
  };
}

/** What administrators may do: see and end anyone's sessions, read the settings. The role is checked at every request. */
export function adminRoutes({ accounts, sessions, signedIn, settings }: AdminRoutesDeps) {
  return [
    route(
      'GET /api/admin/sessions',
      {
        summary: 'Every Account and Its Sessions',
        session: true,
        responses: { 200: { description: 'The accounts with their live sessions', schema: AccountSessions }, ...signedOut, ...notAdmin },
      },
      async (ctx) => {
        const { sessionId } = await requireAdmin(ctx, signedIn);
        const live = await sessions.list();
        ctx.body = {
          users: accounts.all().map((user) => ({
            ...user,
            sessions: live.filter((session) => session.userId === user.id).map((session) => presentSession(session, sessionId)),
          })),
        };
      },
    ),

    route(
      'DELETE /api/admin/sessions/{id}',
      {
        summary: 'End a Session',
        description: 'Ends any account\'s session: its browser is signed out at its next request, on every instance.',
        session: true,
        params: SessionId,
        responses: {
          200: { description: 'Ended', schema: Ended },
          404: failure('No live session has this id', messages.sessionNotFound),
          ...signedOut,
          ...notAdminOrCrossSite,
        },
      },
      async (ctx, { params }) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        await requireAdmin(ctx, signedIn);
        if (!(await sessions.end(params.id))) throw notFound(messages.sessionNotFound);
        ctx.body = { ended: 1 };
      },
    ),

    route(
      'DELETE /api/admin/users/{id}/sessions',
      {
        summary: 'End Every Session of an Account',
        session: true,
        params: UserId,
        responses: {
          200: { description: 'The sessions ended (the administrator\'s own too, when it is their account)', schema: Ended },
          404: failure('No account has this id', messages.userNotFound),
          ...signedOut,
          ...notAdminOrCrossSite,
        },
      },
      async (ctx, { params }) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        await requireAdmin(ctx, signedIn);
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        ctx.body = { ended: await sessions.endAllOf(params.id) };
      },
    ),

    route(
      'GET /api/admin/settings',
      {
        summary: 'Settings',
        description: 'The effective settings that govern sessions, logins and the edge. No secret is among them.',
        session: true,
        responses: { 200: { description: 'The settings', schema: SettingsView }, ...signedOut, ...notAdmin },
      },
      async (ctx) => {
        await requireAdmin(ctx, signedIn);
        ctx.body = presentSettings(settings);
      },
    ),
  ];
}
