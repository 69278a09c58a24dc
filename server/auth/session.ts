import type { Middleware } from 'koa';
import { unauthorized } from '../shared/errors.js';
import type { User } from './accounts.js';
import { readSessionToken } from './cookie.js';
import { messages } from './messages.js';
import type { SessionStore } from './sessions.js';

declare module 'koa' {
  interface DefaultState {
    /** The signed-in user, set by `requireUser` and `redirectUnlessSignedIn`. */
    user?: User;
  }
}

/** For the API: 401 `unauthenticated` without a cookie, 401 `invalid session` for an unknown or expired token. */
export function requireUser(sessions: SessionStore): Middleware {
  return async (ctx, next) => {
    const token = readSessionToken(ctx);
    if (!token) throw unauthorized(messages.unauthenticated);
    const user = sessions.find(token);
    if (!user) throw unauthorized(messages.invalidSession);
    ctx.state.user = user;
    await next();
  };
}

/** For pages: without a valid session, a redirect and nothing of the page. */
export function redirectUnlessSignedIn(sessions: SessionStore, location: string): Middleware {
  return async (ctx, next) => {
    const token = readSessionToken(ctx);
    const user = token ? sessions.find(token) : undefined;
    if (!user) return ctx.redirect(location);
    ctx.state.user = user;
    await next();
  };
}
