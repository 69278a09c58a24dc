import type { Middleware } from 'koa';
import type { AuthConfig, Edge } from '../shared/config.js';
import { HttpError, MalformedJsonError, methodNotAllowed, notFound, payloadTooLarge, UNREADABLE_BODY, type ErrorAnswer } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError } from '../shared/route.js';
import { buildApp, type ServiceDescriptor } from '../shared/service.js';
import { createAccounts } from './accounts.js';
import { ErrorBody, failure, messages } from './messages.js';
import { pageRoutes } from './routes/pages.js';
import { sessionRoutes } from './routes/session.js';
import { SessionStore } from './sessions.js';
import type { Spa } from './spa.js';
import { DeviceTrust, LoginThrottle } from './throttle.js';

export interface AuthDeps {
  config: AuthConfig;
  edge: Edge;
  logger: Logger;
  spa: Spa;
  /** Milliseconds since the epoch; tests move it to expire sessions and throttling windows. */
  now?: () => number;
}

/** A login body is two short strings. */
const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The session login service of docs/specs/session-login-service.md. Its `createApp` throws
 * ConfigError for two accounts with one email.
 */
export const auth: ServiceDescriptor<AuthDeps> = {
  name: 'auth',
  createApp({ config, edge, logger, spa, now = Date.now }) {
    const sessions = new SessionStore({ ...config.sessions, now });
    const routes = [
      ...sessionRoutes({
        accounts: createAccounts(config),
        sessions,
        throttle: new LoginThrottle(now),
        devices: new DeviceTrust(),
        cookie: { maxAgeSeconds: config.sessions.ttlSeconds, secure: config.production },
      }),
      ...pageRoutes({ sessions, spa, production: config.production }),
    ];
    return buildApp({
      contract,
      routes,
      logger,
      edge,
      answerFor,
      bodyLimitBytes: BODY_LIMIT_BYTES,
      before: [neverStored],
      fallback: spa.assets,
    });
  },
};

/** Answers of the API depend on the session: never stored, so Back after logout asks again. */
const neverStored: Middleware = (ctx, next) => {
  if (ctx.path.startsWith('/api/')) ctx.set('Cache-Control', 'no-store');
  return next();
};

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
const WORDING: Record<string, string> = {
  [UNREADABLE_BODY]: messages.invalidLoginBody,
  [notFound().message]: messages.notFound,
  [methodNotAllowed([]).message]: messages.methodNotAllowed,
  [payloadTooLarge().message]: messages.bodyTooLarge,
};

/** Every failure as `{error}`. */
function answerFor(error: unknown): ErrorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({ status, body: { error: message }, headers });
  if (error instanceof InvalidRequestError || error instanceof MalformedJsonError) return answer(400, messages.invalidLoginBody);
  if (error instanceof HttpError) return answer(error.status, WORDING[error.message] ?? error.message, error.headers);
  // Koa's and koa-send's own client errors (a malformed path, for instance).
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500 && expose && typeof message === 'string') {
    return answer(status, message);
  }
  return answer(500, messages.internalError);
}
