import type { Context, Middleware } from 'koa';
import { forbidden, unauthorized } from '../../http/errors.js';
import { route, type Outcomes } from '../../http/route.js';
import type { Accounts, User } from '../accounts.js';
import { isForeignOrigin, sessionTokens } from '../cookies.js';
import { failure, messages } from '../messages.js';
import type { SessionStore } from '../sessions.js';

export type SignedIn = { user: User; sessionId: string };

/** The first of the request's tokens that names a live session of a known account. */
export function signedInWith(sessions: SessionStore, accounts: Accounts) {
  return async (ctx: Context): Promise<SignedIn | undefined> => {
    for (const token of sessionTokens(ctx)) {
      const session = await sessions.find(token);
      const user = session && accounts.byId(session.userId);
      if (user) {
        ctx.state.userId = user.id; // for the request's log line
        return { user, sessionId: session.id };
      }
    }
  };
}

/** Who signed in, as the route's session check found it. */
export const signedInOf = (ctx: Context): SignedIn => ctx.state.signedIn;

const CROSS_SITE = 'Sent from a page of another site (Origin header)';
const NOT_ADMIN = 'The signed-in user is not an administrator (checked at every request)';
const SIGNED_OUT = failure(
  'No `token` cookie (`unauthenticated`), or one that names no live session (`invalid session`)',
  messages.unauthenticated,
);

const sameSite: Middleware = (ctx, next) => {
  if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
  return next();
};
const admin: Middleware = (ctx, next) => {
  if (signedInOf(ctx).user.role !== 'admin') throw forbidden(messages.forbidden);
  return next();
};

/**
 * The operations of a signed-in user: `route`, with the session check before the handler, and on
 * /api/admin/ the role check, at every request. A change (DELETE) sent from a page of another
 * site is refused first.
 */
export function signedInRoutes(signedIn: ReturnType<typeof signedInWith>): typeof route {
  const session: Middleware = async (ctx, next) => {
    ctx.state.signedIn = await signedIn(ctx);
    if (ctx.state.signedIn) return next();
    const tokens = sessionTokens(ctx).length;
    throw unauthorized(tokens === 0 ? messages.unauthenticated : messages.invalidSession);
  };
  return (line, spec, handler) => {
    const [forAdmins, change] = [line.includes(' /api/admin/'), line.startsWith('DELETE ')];
    const or = change ? `; or ${CROSS_SITE}, then \`${messages.foreignRequest}\`` : '';
    const refused: Outcomes = forAdmins
      ? { 403: failure(NOT_ADMIN + or, messages.forbidden) }
      : change
        ? { 403: failure(CROSS_SITE, messages.foreignRequest) }
        : {};
    const use = [...(change ? [sameSite] : []), session, ...(forAdmins ? [admin] : [])];
    const responses = { ...spec.responses, 401: SIGNED_OUT, ...refused };
    return route(line, { ...spec, session: true, use, responses }, handler);
  };
}
