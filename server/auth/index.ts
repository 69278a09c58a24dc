import type { AuthConfig, Edge } from '../config.js';
import type { Database } from '../db/pool.js';
import { serviceApp, type ErrorAnswer, type Hosting } from '../http/app.js';
import { UNREADABLE_BODY } from '../http/body.js';
import { HttpError, MalformedJsonError } from '../http/errors.js';
import type { Metrics } from '../http/metrics.js';
import type { Contract } from '../http/openapi.js';
import { InvalidRequestError } from '../http/route.js';
import type { Logger } from '../logger.js';
import { createAccounts, type Accounts } from './accounts.js';
import { AuditRing, AuditTrail, type AuditEventType } from './auditLog.js';
import { AUDIT_RATE } from './auditRate.js';
import { DeviceTrust } from './deviceTrust.js';
import {
  MemoryGenerations,
  PostgresGenerations,
  type CredentialGenerations,
} from './generations.js';
import { LOGIN_LIMITS, LoginLimits } from './limits.js';
import { loginCheck } from './login.js';
import { ErrorBody, failure, messages } from './messages.js';
import { PostgresAuditLog } from './postgresAuditLog.js';
import { PostgresSessionStore } from './postgresSessions.js';
import { adminViews } from './presenters.js';
import { adminRoutes } from './routes/admin.js';
import { pageRoutes } from './routes/pages.js';
import { sessionRoutes } from './routes/session.js';
import { ownSessionRoutes } from './routes/sessions.js';
import { MemorySessionStore, signedInWith, type SessionStore } from './sessions.js';
import type { Spa } from './spa.js';
import { WAITING_PER_ADDRESS } from './checkQueue.js';

export interface AuthDeps extends Hosting {
  config: AuthConfig;
  edge: Edge;
  logger: Logger;
  spa: Spa;
  /**
   * The pool on the service's schema: sessions and login limits are kept there when
   * `config.sessions.store` is `postgres`.
   */
  db?: Database;
}

interface AuthState {
  sessions: SessionStore;
  generations: CredentialGenerations;
  limits: LoginLimits;
  devices: DeviceTrust;
  audit: AuditTrail;
  /** Resolves when the service can answer requests (undefined: always). */
  ready?: () => Promise<unknown>;
}

const OUTCOMES = ['succeeded', 'failed', 'throttled'] as const;

/** What the audit trail tells the metrics: each login attempt's outcome. */
function loginCounter(metrics: Metrics): (type: AuditEventType) => void {
  const count = metrics.loginAttempts(OUTCOMES);
  return (type) => {
    const outcome = OUTCOMES.find((name) => type === `login.${name}`);
    if (outcome) count(outcome);
  };
}

/**
 * Where sessions, credential generations, login limits, the device key and the audit trail live:
 * this process, or the database every instance shares.
 */
function stateOf({
  config,
  db,
  logger,
  accounts,
  metrics,
}: Pick<AuthDeps, 'config' | 'db' | 'logger' | 'metrics'> & { accounts: Accounts }): AuthState {
  const limits = {
    ttlSeconds: config.sessions.ttlSeconds,
    max: config.sessions.max,
    maxPerUser: config.sessions.maxPerUser,
  };
  const trustDays = config.deviceTrustDays;
  const recorded = metrics && loginCounter(metrics);
  if (config.sessions.store === 'memory') {
    const generations = new MemoryGenerations();
    return {
      sessions: new MemorySessionStore({
        ...limits,
        generationOf: (userId) => generations.of(userId),
      }),
      generations,
      limits: new LoginLimits(),
      devices: DeviceTrust.inMemory({ trustDays, generations }),
      audit: new AuditTrail(new AuditRing(config.audit), accounts, logger, recorded),
    };
  }
  if (!db) throw new Error("SESSION_STORE=postgres needs the pool on the login service's schema");
  const credentials = config.accounts.map(({ email, password }) => ({
    id: accounts.idOf(email)!,
    email,
    password,
  }));
  const generations = new PostgresGenerations(db, credentials, config.passwordHashCost);
  // Compared at once, so that the sessions of a changed password end at the start, not at the first
  // request.
  generations
    .checked()
    .catch((error: unknown) =>
      logger.warn(
        { err: (error as Error).message },
        'stored credentials not compared yet; tried again at the next request',
      ),
    );
  const sessions = new PostgresSessionStore(db, limits, () => generations.checked());
  const auditLog = new PostgresAuditLog(db, config.audit, logger);
  const audit = new AuditTrail(auditLog, accounts, logger, recorded);
  db.every(config.sessions.sweepIntervalMs, async () => {
    const swept = await sessions.sweep();
    if (swept > 0) logger.info({ swept }, 'expired sessions deleted');
    audit.keepEnded();
    await auditLog.trim();
  });
  return {
    sessions,
    generations,
    limits: new LoginLimits(db),
    devices: DeviceTrust.inPostgres(db, { trustDays, generations }),
    audit,
    ready: async () => {
      await generations.checked();
      await db.query('SELECT 1');
    },
  };
}

/** A login body is two short strings. */
const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The session login service of docs/specs/session-login-service.md. Throws ConfigError for two
 * accounts with one email.
 */
export function authApp({ config, edge, logger, spa, db, ...hosting }: AuthDeps) {
  const accounts = createAccounts(config);
  const { sessions, generations, limits, devices, audit, ready } = stateOf({
    config,
    db,
    logger,
    accounts,
    metrics: hosting.metrics,
  });
  hosting.metrics?.sessions(config.sessions.store, () => sessions.count());
  const signedIn = signedInWith(sessions, accounts);
  const checkLogin = loginCheck({ accounts, generations, devices, limits, audit });
  const { store, ttlSeconds, max, maxPerUser } = config.sessions;
  const settings = {
    sessions: { store, ttlSeconds, max, maxPerUser },
    limits: LOGIN_LIMITS,
    waitingPerAddress: WAITING_PER_ADDRESS,
    audit: { ...config.audit, rate: AUDIT_RATE },
    deviceTrustDays: config.deviceTrustDays,
    edge,
    passwordHashCost: config.passwordHashCost,
  };
  const admin = adminViews({ accounts, sessions, limits, audit, settings });
  const routes = [
    ...sessionRoutes({
      sessions,
      signedIn,
      checkLogin,
      devices,
      audit,
      cookie: { maxAgeSeconds: ttlSeconds, secure: config.production },
    }),
    ...ownSessionRoutes({ sessions, signedIn, audit }),
    ...adminRoutes({ accounts, generations, sessions, limits, audit, signedIn, views: admin }),
    ...pageRoutes({ signedIn, admin, spa, production: config.production }),
  ];
  return serviceApp({
    name: 'auth',
    contract,
    routes,
    shape,
    logger,
    edge,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    // Answers of the API depend on the session: never stored, so Back after logout asks again.
    headers: { 'cache-control': 'no-store' },
    files: spa.assets,
    ready,
    ...hosting,
  });
}

const contract: Contract = {
  title: 'Session Login API',
  version: '1.0.0',
  description:
    'Log in with an email and password, read the current user, log out. The session token travels in the HttpOnly `token` cookie. Every failure answers `{error: string}`.',
  errorSchema: ErrorBody,
  invalidBody: {
    400: failure(
      'The body is not a JSON object with a string `email` and `password`',
      messages.invalidLoginBody,
    ),
  },
  invalidParams: {},
  invalidQuery: {
    400: failure('A query parameter is not valid', 'limit must be less than or equal to 100'),
  },
  unmatched: { 400: failure('A file path that is not valid percent-encoding', 'failed to decode') },
};

/**
 * The service's own words for the shared failures; others keep the message they were thrown with.
 */
const WORDING: Record<string, string> = {
  [UNREADABLE_BODY]: messages.invalidLoginBody,
  [new HttpError(404).message]: messages.notFound,
  [new HttpError(405).message]: messages.methodNotAllowed,
  'Request body too large': messages.bodyTooLarge,
};

/** Every failure as `{error}`. */
function shape(error: unknown): ErrorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({
    status,
    body: { error: message },
    headers,
  });
  if (error instanceof InvalidRequestError && error.query)
    return answer(400, error.query.errors.join('; '));
  if (error instanceof InvalidRequestError || error instanceof MalformedJsonError)
    return answer(400, messages.invalidLoginBody);
  if (error instanceof HttpError)
    return answer(error.status, WORDING[error.message] ?? error.message, error.headers);
  // Koa's and koa-send's own client errors (a malformed path, for instance).
  const { status, expose, message } = error as {
    status?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  if (
    typeof status === 'number' &&
    status >= 400 &&
    status < 500 &&
    expose &&
    typeof message === 'string'
  ) {
    return answer(status, message);
  }
  return answer(500, messages.internalError);
}
