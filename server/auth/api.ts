import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { notFound, tooManyRequests, unauthorized } from '../shared/errors.js';
import { readBody } from '../shared/body.js';
import { validate } from '../shared/validate.js';
import type { Accounts } from './accounts.js';
import { deleteSessionCookie, readSessionToken, setSessionCookie } from './cookie.js';
import { messages } from './messages.js';
import { LoginInput } from './schema.js';
import { apiHeaders, refuseForeignOrigin } from './security.js';
import { requireUser } from './session.js';
import type { SessionStore } from './sessions.js';
import type { LoginThrottle } from './throttle.js';

const LOGIN_BODY_LIMIT_BYTES = 16 * 1024;

export interface ApiDeps {
  accounts: Accounts;
  sessions: SessionStore;
  throttle: LoginThrottle;
  cookie: { maxAgeSeconds: number; secure: boolean };
  production: boolean;
}

/** `/api/login`, `/api/me`, `/api/logout`; anything else under /api is a JSON 404 (or 405). */
export function apiRoutes(deps: ApiDeps): Middleware {
  const router = new Router({ prefix: '/api' });
  router.post(
    '/login',
    refuseForeignOrigin(),
    readBody({ limitBytes: LOGIN_BODY_LIMIT_BYTES }),
    validate(LoginInput),
    throttleLogins(deps.throttle),
    login(deps),
  );
  router.get('/me', requireUser(deps.sessions), (ctx) => {
    ctx.body = { user: ctx.state.user };
  });
  router.post('/logout', logout(deps));

  // The router's types want its own context type; at run time it is Koa's context.
  const routes = router.routes() as Middleware;
  const allowedMethods = router.allowedMethods() as Middleware;
  const dispatch = async (ctx: Context) => {
    await routes(ctx, () => allowedMethods(ctx, async () => undefined));
    if (ctx.status === 405) ctx.body = { error: messages.methodNotAllowed };
    else if (ctx.body == null) throw notFound(messages.notFound);
  };
  const headers = apiHeaders({ production: deps.production });
  return (ctx, next) => (isApiPath(ctx.path) ? headers(ctx, () => dispatch(ctx)) : next());
}

const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/');

function throttleLogins(throttle: LoginThrottle): Middleware {
  return async (ctx, next) => {
    const { email } = ctx.state.input as LoginInput;
    const retryAfter = throttle.admit(email, ctx.ip);
    if (retryAfter !== undefined) throw tooManyRequests(messages.tooManyAttempts, retryAfter);
    await next();
  };
}

function login({ accounts, sessions, throttle, cookie }: ApiDeps): Middleware {
  return async (ctx) => {
    const { email, password } = ctx.state.input as LoginInput;
    const user = await accounts.authenticate(email, password);
    if (!user) throw unauthorized(messages.invalidCredentials);
    throttle.succeeded(email, ctx.ip);
    // Decision: a login from a browser that still holds a session replaces it; the old token
    // could no longer be reached by that browser, so it is ended rather than left to expire.
    const previous = readSessionToken(ctx);
    if (previous) sessions.remove(previous);
    setSessionCookie(ctx, sessions.create(user), cookie);
    ctx.body = { ok: true };
  };
}

function logout({ sessions, cookie }: ApiDeps): Middleware {
  return async (ctx) => {
    const token = readSessionToken(ctx);
    if (token) sessions.remove(token);
    deleteSessionCookie(ctx, cookie);
    ctx.body = { ok: true };
  };
}
