import Koa from 'koa';
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
import { DeviceTrust } from './deviceTrust.js';
import { MemoryGenerations, PostgresGenerations } from './generations.js';
import { LoginLimits } from './limits.js';
import { loginCheck } from './login.js';
import { ErrorBody, failure, messages } from './messages.js';
import { PostgresAuditLog } from './postgresAuditLog.js';
import { PostgresSessionStore } from './postgresSessions.js';
import { adminViews, presentSettings } from './presenters.js';
import { adminRoutes } from './routes/admin.js';
import { pageRoutes } from './routes/pages.js';
import { sessionRoutes } from './routes/session.js';
import { ownSessionRoutes } from './routes/sessions.js';
import { MemorySessionStore, signedInWith } from './sessions.js';
import type { Spa } from './spa.js';

export interface AuthDeps extends Hosting {
  config: AuthConfig;
  edge: Edge;
  logger: Logger;
  spa: Spa;
  /** The pool on the service's schema, for SESSION_STORE=postgres. */
  db?: Database;
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
function stateOf({ config, db, logger, metrics }: AuthDeps, accounts: Accounts) {
  const trustDays = config.deviceTrustDays;
  const recorded = metrics && loginCounter(metrics);
  if (config.sessions.store === 'memory') {
    const generations = new MemoryGenerations();
    return {
      sessions: new MemorySessionStore({
        ...config.sessions,
        generationOf: (userId) => generations.of(userId),
      }),
      generations,
      limits: new LoginLimits(),
      devices: DeviceTrust.inMemory({ trustDays, generations }),
      audit: new AuditTrail(new AuditRing(config.audit), accounts, logger, recorded),
      ready: undefined,
    };
  }
  if (!db) throw new Error("SESSION_STORE=postgres needs the pool on the login service's schema");
  const credentials = config.accounts.map(({ email, password }) => ({
    id: accounts.idOf(email)!,
    email,
    password,
  }));
  const generations = new PostgresGenerations(db, credentials, config.passwordHashCost);
  // Compared at once: the sessions of a changed password end at the start, not at a request.
  generations
    .checked()
    .catch((error: unknown) =>
      logger.warn(
        { err: (error as Error).message },
        'stored credentials not compared yet; tried again at the next request',
      ),
    );
  const sessions = new PostgresSessionStore(db, config.sessions, () => generations.checked());
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

/** What the routes are made of. */
function servicesOf(deps: AuthDeps) {
  const { config, edge, spa } = deps;
  const accounts = createAccounts(config);
  const state = stateOf(deps, accounts);
  deps.metrics?.sessions(config.sessions.store, () => state.sessions.count());
  return {
    ...state,
    accounts,
    signedIn: signedInWith(state.sessions, accounts),
    checkLogin: loginCheck({ accounts, ...state }),
    views: adminViews({ accounts, ...state }, presentSettings(config, edge)),
    spa,
    cookie: { maxAgeSeconds: config.sessions.ttlSeconds, secure: config.production },
    production: config.production,
  };
}

export type AuthServices = ReturnType<typeof servicesOf>;

/** The session login service of docs/specs/session-login-service.md. */
export function authApp(deps: AuthDeps) {
  const { config, db, spa, ...hosting } = deps;
  const services = servicesOf(deps);
  const routes = [sessionRoutes, ownSessionRoutes, adminRoutes, pageRoutes].flatMap((routes) =>
    routes(services),
  );
  return serviceApp({
    name: 'auth',
    contract,
    routes,
    shape,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    // Answers of the API depend on the session: never stored, so Back after logout asks again.
    headers: { 'cache-control': 'no-store' },
    files: spa.assets,
    ready: services.ready,
    ...hosting,
  });
}

const contract: Contract = {
  title: 'Session Login API',
  version: '1.0.0',
  description:
    'Log in with an email and password, read the current user, log out. ' +
    'The session token travels in the HttpOnly `token` cookie. ' +
    'Every failure answers `{error: string}`.',
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

/** The service's own words for the shared failures; others keep the message thrown. */
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
  if (error instanceof Koa.HttpError && error.expose && error.status < 500)
    return answer(error.status, error.message);
  return answer(500, messages.internalError);
}
