import type { AuthConfig, Edge } from '../config.js';
import type { Database } from '../db/pool.js';
import { serviceApp, type Hosting } from '../http/app.js';
import type { Logger } from '../logger.js';
import { createAccounts } from './accounts.js';
import { AuditRing, AuditTrail } from './auditLog.js';
import { DeviceTrust } from './deviceTrust.js';
import { LoginLimits } from './limits.js';
import { loginCheck } from './login.js';
import { contract, shape } from './messages.js';
import { PostgresSessionStore } from './postgresSessions.js';
import { adminViews } from './presenters.js';
import { adminRoutes } from './routes/admin.js';
import { pageRoutes } from './routes/pages.js';
import { sessionRoutes } from './routes/session.js';
import { sessionListRoutes } from './routes/sessions.js';
import { signedInRoutes, signedInWith } from './routes/signedIn.js';
import { MemorySessionStore } from './sessions.js';
import type { Spa } from './spa.js';

export interface AuthDeps extends Hosting {
  config: AuthConfig;
  edge: Edge;
  logger: Logger;
  spa: Spa;
  /** The pool on the service's schema, for SESSION_STORE=postgres. */
  db?: Database;
}

/** Sessions and login limits: in this process, or in the database every instance shares. */
function storesOf({ config, db, logger }: AuthDeps) {
  if (config.sessions.store === 'memory')
    return { sessions: new MemorySessionStore(config.sessions), limits: new LoginLimits() };
  if (!db) throw new Error("SESSION_STORE=postgres needs the pool on the login service's schema");
  const credentials = config.accounts.map((account, at) => ({ ...account, id: String(at + 1) }));
  const { sessions: limits, passwordHashCost } = config;
  const sessions = new PostgresSessionStore(db, limits, credentials, passwordHashCost);
  // Compared at once: the sessions of a changed password end at the start, not at a request.
  sessions.checked().catch((error: Error) => {
    logger.warn({ err: error.message }, 'stored credentials not compared yet; tried again later');
  });
  db.every(config.sessions.sweepIntervalMs, async () => {
    const swept = await sessions.sweep();
    if (swept > 0) logger.info({ swept }, 'expired sessions deleted');
  });
  const ready = () => Promise.all([sessions.checked(), db.query('SELECT 1')]);
  return { sessions, limits: new LoginLimits(db), ready };
}

function servicesOf(deps: AuthDeps) {
  const { config, edge, db, logger, metrics } = deps;
  const stores = storesOf(deps);
  const accounts = createAccounts(config);
  const loginOutcomes = metrics?.loginAttempts(['succeeded', 'failed', 'throttled']);
  const audit = new AuditTrail(new AuditRing(config.audit), accounts, logger, loginOutcomes);
  const devices = new DeviceTrust(config.deviceTrustDays, stores.sessions, db);
  const signedIn = signedInWith(stores.sessions, accounts);
  metrics?.sessions(config.sessions.store, () => stores.sessions.count());
  return {
    ...stores,
    accounts,
    audit,
    devices,
    signedIn,
    spa: deps.spa,
    production: config.production,
    signedInRoute: signedInRoutes(signedIn),
    checkLogin: loginCheck({ ...stores, accounts, audit, devices }),
    views: adminViews({ ...stores, accounts, audit }, config, edge),
    cookie: { maxAgeSeconds: config.sessions.ttlSeconds, secure: config.production },
  };
}

export type AuthServices = ReturnType<typeof servicesOf>;

/** The session login service of docs/specs/session-login-service.md. */
export function authApp(deps: AuthDeps) {
  const { config: _, db: __, spa, ...hosting } = deps;
  const services = servicesOf(deps);
  const routes = [sessionRoutes, sessionListRoutes, adminRoutes, pageRoutes];
  return serviceApp({
    name: 'auth',
    contract,
    routes: routes.flatMap((routesOf) => routesOf(services)),
    shape,
    // A login body is two short strings.
    bodyLimitBytes: 16 * 1024,
    // Answers of the API depend on the session: never stored, so Back after logout asks again.
    headers: { 'cache-control': 'no-store' },
    files: spa.assets,
    ready: services.ready,
    ...hosting,
  });
}
