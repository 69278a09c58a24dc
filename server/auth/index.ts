import type { Middleware } from 'koa';
import { ConfigError, type AuthConfig } from '../shared/config.js';
import { HttpError, MalformedJsonError, type ErrorAnswer } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError } from '../shared/route.js';
import { buildApp, type ServiceDescriptor } from '../shared/service.js';
import { createAccounts } from './accounts.js';
import { messages } from './messages.js';
import { ErrorBody, authRoutes, failure } from './routes.js';
import { apiHeaders, pageHeaders } from './security.js';
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

/** A login body is two short strings. */
const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The session login service of docs/specs/session-login-service.md. Its `createApp` throws ConfigError
 * instead of returning an app when the configuration is unsafe: production mode with a default
 * password, duplicate account emails, or a password hash cost that is not a power of two.
 */
export const auth: ServiceDescriptor<AuthDeps> = {
  name: 'auth',
  createApp({ config, logger, spa, now = Date.now }) {
    if (config.production && config.usingDefaultPasswords) {
      throw new ConfigError(
        'Refusing to start in production mode with a default account password: set AUTH_USER_PASSWORD and AUTH_ADMIN_PASSWORD',
      );
    }
    const routes = authRoutes({
      accounts: createAccounts(config),
      sessions: new SessionStore({ ttlSeconds: config.sessionTtlSeconds, max: config.sessionMax, now }),
      throttle: new LoginThrottle(now),
      cookie: { maxAgeSeconds: config.sessionTtlSeconds, secure: config.production },
      spa,
    });
    return buildApp({
      contract,
      routes,
      logger,
      answerFor,
      bodyLimitBytes: BODY_LIMIT_BYTES,
      before: [headers(config.production, spa)],
      fallback: spa.assets,
    });
  },
};

/** The JSON API answers with its own short header set; pages and their files get helmet's. */
function headers(production: boolean, spa: Spa): Middleware {
  const api = apiHeaders({ production });
  const pages = pageHeaders({ production, allow: spa.csp });
  return (ctx, next) => (ctx.path.startsWith('/api/') ? api(ctx, next) : pages(ctx, next));
}

const contract: Contract = {
  title: 'Session Login API',
  version: '1.0.0',
  description:
    'Log in with an email and password, read the current user, log out. The session token travels in the HttpOnly `token` cookie. Every failure answers `{error: string}`.',
  errorSchema: ErrorBody,
  invalidBody: { 400: failure('The body is not a JSON object with a string `email` and `password`', messages.invalidLoginBody) },
  invalidParams: {},
  unmatched: { 400: failure('A file path that is not valid percent-encoding', 'failed to decode') },
};

/** The service's own words for the shared failures; others keep the message they were thrown with. */
const WORDING: Record<number, string> = {
  400: messages.invalidLoginBody,
  404: messages.notFound,
  405: messages.methodNotAllowed,
  413: messages.bodyTooLarge,
};

/** Every failure as `{error}`. */
function answerFor(error: unknown): ErrorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({ status, body: { error: message }, headers });
  if (error instanceof InvalidRequestError || error instanceof MalformedJsonError) return answer(400, messages.invalidLoginBody);
  if (error instanceof HttpError) return answer(error.status, WORDING[error.status] ?? error.message, error.headers);
  // Koa's and koa-send's own client errors (a malformed path, for instance).
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500 && expose && typeof message === 'string') {
    return answer(status, message);
  }
  return answer(500, messages.internalError);
}
