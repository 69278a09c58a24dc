import type { Context } from 'koa';
import { route } from '../../shared/route.js';
import { documentHeaders } from '../../shared/securityHeaders.js';
import type { SignedInCheck } from '../sessions.js';
import type { Spa } from '../spa.js';

export interface PageRoutesDeps {
  signedIn: SignedInCheck;
  spa: Spa;
  production: boolean;
}

/** The two pages: `/dashboard` passes the session check before any of it is sent. */
export function pageRoutes({ signedIn, spa, production }: PageRoutesDeps) {
  const pageHeaders = documentHeaders({ production, allow: spa.csp });
  const page = async (ctx: Context) => {
    await pageHeaders(ctx, async () => undefined);
    // The answer depends on the session: never stored, so Back after logout asks again.
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = await spa.page(ctx.url);
  };

  return [
    route('GET /', { internal: true }, (ctx) => ctx.redirect('/dashboard')),

    route('GET /login', { internal: true }, page),

    route('GET /dashboard', { internal: true }, async (ctx) => {
      if (await signedIn(ctx)) return page(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect('/login');
    }),
  ];
}
