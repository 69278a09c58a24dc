import type { Context } from 'koa';
import { route } from '../../http/route.js';
import { FixedBody, sendFixed } from '../../http/fixedBody.js';
import { compressPages, documentHeaders } from '../../http/headers.js';
import type { AdminViews } from '../presenters.js';
import type { SignedIn, SignedInCheck } from '../sessions.js';
import type { PageState, Spa } from '../spa.js';

export interface PageRoutesDeps {
  signedIn: SignedInCheck;
  /** What the administrators' pages show, as the admin API shows it. */
  admin: AdminViews;
  spa: Spa;
  production: boolean;
}

/**
 * The pages: `/dashboard` passes the session check before any of it is sent, and is then
 * rendered for the user the check found (the email, the role and the admin menu are in the HTML).
 * The administrators' pages pass the role check too: a user's browser gets a page saying it may
 * not, with status 403.
 */
export function pageRoutes({ signedIn, admin, spa, production }: PageRoutesDeps) {
  const page = async (ctx: Context, state: PageState) => {
    // The answer depends on the session: never stored, so Back after logout asks again.
    ctx.set('Cache-Control', 'no-store');
    const document = await spa.page(ctx.path, state);
    if (document instanceof FixedBody) return sendFixed(ctx, document);
    ctx.type = 'html';
    ctx.body = document;
  };

  // helmet's headers for a document, its policy allowing what the pages load.
  const PAGE = {
    internal: true,
    use: [documentHeaders({ production, allow: spa.csp }), compressPages()],
  };
  return [
    route('GET /', PAGE, (ctx) => ctx.redirect('/dashboard')),

    route('GET /login', PAGE, (ctx) => page(ctx, { page: 'login' })),

    route('GET /dashboard', PAGE, async (ctx) => {
      const found = await signedIn(ctx);
      if (!found) return toLogin(ctx);
      return page(ctx, { page: 'dashboard', user: userOf(found) });
    }),

    route('GET /admin/users', PAGE, async (ctx) => {
      const found = await signedIn(ctx);
      if (!found) return toLogin(ctx);
      if (found.user.role !== 'admin') return forbiddenPage(ctx, found);
      return page(ctx, {
        page: 'users',
        user: userOf(found),
        accounts: await admin.overview(found.sessionId),
      });
    }),

    route('GET /admin/settings', PAGE, async (ctx) => {
      const found = await signedIn(ctx);
      if (!found) return toLogin(ctx);
      if (found.user.role !== 'admin') return forbiddenPage(ctx, found);
      return page(ctx, { page: 'settings', user: userOf(found), settings: admin.settings });
    }),
  ];

  function forbiddenPage(ctx: Context, found: SignedIn) {
    ctx.status = 403;
    return page(ctx, { page: 'forbidden', user: userOf(found) });
  }
}

const userOf = ({ user: { id, email, role } }: SignedIn) => ({ id, email, role });

function toLogin(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect('/login');
}
