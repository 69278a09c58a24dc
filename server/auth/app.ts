import Koa from 'koa';
import { ConfigError, type AuthConfig } from '../shared/config.js';
import { requestLogger, type Logger } from '../shared/logger.js';
import { createAccounts } from './accounts.js';
import { apiRoutes } from './api.js';
import { handleAuthErrors } from './errors.js';
import { pageRoutes } from './pages.js';
import { pageHeaders } from './security.js';
import { SessionStore } from './sessions.js';
import type { Spa } from './spa.js';
import { LoginThrottle } from './throttle.js';

export interface AuthDeps {
  config: AuthConfig;
  logger: Logger;
  spa: Spa;
  /** Milliseconds since the epoch; tests move it to expire sessions and throttling windows. */
  now?: () => number;
}

/**
 * The session login service. Throws ConfigError instead of returning an app when the
 * configuration is unsafe: production mode with a default password, duplicate account emails,
 * or a password hash cost that is not a power of two.
 */
export function createApp({ config, logger, spa, now = Date.now }: AuthDeps): Koa {
  if (config.production && config.usingDefaultPasswords) {
    throw new ConfigError(
      'Refusing to start in production mode with a default account password: set AUTH_USER_PASSWORD and AUTH_ADMIN_PASSWORD',
    );
  }
  const accounts = createAccounts(config);
  const sessions = new SessionStore({ ttlSeconds: config.sessionTtlSeconds, max: config.sessionMax, now });

  const app = new Koa();
  app.use(requestLogger(logger));
  app.use(handleAuthErrors(logger));
  // /api answers with headers of its own; everything past it is a page or a page's asset.
  app.use(
    apiRoutes({
      accounts,
      sessions,
      throttle: new LoginThrottle(now),
      cookie: { maxAgeSeconds: config.sessionTtlSeconds, secure: config.production },
      production: config.production,
    }),
  );
  app.use(pageHeaders({ production: config.production, allow: spa.csp }));
  app.use(pageRoutes({ spa, sessions }));
  app.use(spa.assets);
  return app;
}
