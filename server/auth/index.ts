import type { AuthConfig, Edge } from '../shared/config.js';
import {
  HttpError,
  MalformedJsonError,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  UNREADABLE_BODY,
  type ErrorAnswer,
} from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { LoginOutcome, Measures } from '../shared/metrics.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError } from '../shared/route.js';
import type { Database } from '../shared/database.js';
import { buildApp, ownSchema, type Hosting, type ServiceDescriptor } from '../shared/service.js';
import { createAccounts, type Accounts } from './accounts.js';
import { ADDRESS_LIMITS, AddressBudget } from './addressBudget.js';
import { AttemptsInFlight } from './attemptsInFlight.js';
import { AuditRing, AuditTrail, type AuditEventType } from './auditLog.js';
import { AUDIT_RATE } from './auditRate.js';
import { DeviceTrust } from './deviceTrust.js';
import {
  MemoryGenerations,
  PostgresGenerations,
  type CredentialGenerations,
} from './generations.js';
import { loginChecks } from './loginChecks.js';
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
import { LoginThrottle, THROTTLE_LIMITS } from './throttle.js';

export interface AuthDeps extends Hosting {
  config: AuthConfig;
  edge: Edge;
  logger: Logger;
  spa: Spa;
  /**
   * The pool on the service's schema: sessions and throttling are kept there when
   * `config.sessions.store` is `postgres`.
   */
  db?: Database;
  /**
   * Milliseconds since the epoch (the memory store's clock, and the age of device cookies); tests
   * move it to expire sessions, throttling windows and device cookies.
   */
  now?: () => number;
}

interface AuthState {
  sessions: SessionStore;
  generations: CredentialGenerations;
  throttle: LoginThrottle;
  addresses: AddressBudget;
  devices: DeviceTrust;
  audit: AuditTrail;
  /** Resolves when the service can answer requests (undefined: always). */
  ready?: () => Promise<unknown>;
}

/** The audit trail's events that end a login attempt, by the outcome the metrics count. */
const LOGIN_OUTCOMES: Partial<Record<AuditEventType, LoginOutcome>> = {
  'login.succeeded': 'succeeded',
  'login.failed': 'failed',
  'login.throttled': 'throttled',
  'login.busy': 'busy',
};

/** What the audit trail tells the metrics: each login attempt's outcome. */
function loginCounter(measures: Measures): (type: AuditEventType) => void {
  const count = measures.loginAttempts();
  return (type) => {
    const outcome = LOGIN_OUTCOMES[type];
    if (outcome) count(outcome);
  };
}

/**
 * Where sessions, credential generations, failed logins, the device key and the audit trail live:
 * this process, or the database every instance shares.
 */
function stateOf({
  config,
  db,
  logger,
  now,
  accounts,
  measures,
}: Pick<AuthDeps, 'config' | 'db' | 'logger' | 'measures'> & {
  now: () => number;
  accounts: Accounts;
}): AuthState {
  const limits = {
    ttlSeconds: config.sessions.ttlSeconds,
    max: config.sessions.max,
    maxPerUser: config.sessions.maxPerUser,
  };
  const trust = { now, trustDays: config.deviceTrustDays };
  const recorded = measures && loginCounter(measures);
  if (config.sessions.store === 'memory') {
    const generations = new MemoryGenerations();
    return {
      sessions: new MemorySessionStore({
        ...limits,
        now,
        generationOf: (userId) => generations.of(userId),
      }),
      generations,
      throttle: LoginThrottle.inMemory(now),
      addresses: AddressBudget.inMemory(now),
      devices: DeviceTrust.inMemory({ ...trust, generations }),
      audit: new AuditTrail(new AuditRing(config.audit, now), accounts, logger, now, recorded),
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
  const throttle = LoginThrottle.inPostgres(db);
  const addresses = AddressBudget.inPostgres(db, now);
  const auditLog = new PostgresAuditLog(db, config.audit, logger, now);
  const audit = new AuditTrail(auditLog, accounts, logger, now, recorded);
  db.every(config.sessions.sweepIntervalMs, async () => {
    const swept = await sessions.sweep();
    if (swept > 0) logger.info({ swept }, 'expired sessions deleted');
    await throttle.sweep();
    await addresses.sweep();
    audit.keepEnded();
    await auditLog.trim();
  });
  return {
    sessions,
    generations,
    throttle,
    addresses,
    devices: DeviceTrust.inPostgres(db, { ...trust, generations }),
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
 * The session login service of docs/specs/session-login-service.md. Its `createApp` throws
 * ConfigError for two accounts with one email.
 */
export const auth: ServiceDescriptor<AuthDeps> = {
  name: 'auth',
  database: ownSchema('auth'),
  usesDatabase: (config) => config.sessions.store === 'postgres',
  createApp({ config, edge, logger, spa, db, now = Date.now, ...hosting }) {
    const accounts = createAccounts(config);
    const { sessions, generations, throttle, addresses, devices, audit, ready } = stateOf({
      config,
      db,
      logger,
      now,
      accounts,
      measures: hosting.measures,
    });
    hosting.measures?.sessions(config.sessions.store, () => sessions.count());
    const signedIn = signedInWith(sessions, accounts);
    const checkLogin = loginChecks({
      accounts,
      generations,
      devices,
      inFlight: new AttemptsInFlight(ADDRESS_LIMITS.atOnce),
      addresses,
      throttle,
      audit,
    });
    const { store, ttlSeconds, max, maxPerUser } = config.sessions;
    const settings = {
      sessions: { store, ttlSeconds, max, maxPerUser },
      throttling: THROTTLE_LIMITS,
      addresses: ADDRESS_LIMITS,
      audit: { ...config.audit, rate: AUDIT_RATE },
      deviceTrustDays: config.deviceTrustDays,
      edge,
      passwordHashCost: config.passwordHashCost,
    };
    const admin = adminViews({ accounts, sessions, throttle, audit, settings });
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
      ...adminRoutes({ accounts, generations, sessions, throttle, audit, signedIn, views: admin }),
      ...pageRoutes({ signedIn, admin, spa, production: config.production }),
    ];
    return buildApp({
      contract,
      routes,
      logger,
      edge,
      answerFor,
      bodyLimitBytes: BODY_LIMIT_BYTES,
      // Answers of the API depend on the session: never stored, so Back after logout asks again.
      headers: { 'cache-control': 'no-store' },
      fallback: spa.assets,
      ready,
      ...hosting,
    });
  },
};

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
  [notFound().message]: messages.notFound,
  [methodNotAllowed([]).message]: messages.methodNotAllowed,
  [payloadTooLarge().message]: messages.bodyTooLarge,
};

/** Every failure as `{error}`. */
function answerFor(error: unknown): ErrorAnswer {
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
