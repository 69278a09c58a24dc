import type { Context } from 'koa';
import { route } from '../../shared/route.js';
import { documentHeaders } from '../../shared/securityHeaders.js';
import type { SignedInCheck } from '../sessions.js';
import type { PageState, Spa } from '../spa.js';

export interface PageRoutesDeps {
  signedIn: SignedInCheck;
  spa: Spa;
  production: boolean;
}

/**
 * The two pages: `/dashboard` passes the session check before any of it is sent, and is then
 * rendered for the user the check found (the email, the role and the admin menu are in the HTML).
 */
export function pageRoutes({ signedIn, spa, production }: PageRoutesDeps) {
  const pageHeaders = documentHeaders({ production, allow: spa.csp });
  const page = async (ctx: Context, state: PageState) => {
    await pageHeaders(ctx, async () => undefined);
    // The answer depends on the session: never stored, so Back after logout asks again.
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = await spa.page(state);
  };

  return [
    route('GET /', { internal: true }, (ctx) => ctx.redirect('/dashboard')),

    route('GET /login', { internal: true }, (ctx) => page(ctx, { page: 'login' })),

    route('GET /dashboard', { internal: true }, async (ctx) => {
      const user = (await signedIn(ctx))?.user;
      if (user) return page(ctx, { page: 'dashboard', user: { id: user.id, email: user.email, role: user.role } });
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect('/login');
    }),
  ];
}
