import type { PageState } from '../../../web/src/pageState.js';
import { compressPages, documentHeaders } from '../../http/headers.js';
import { route } from '../../http/route.js';
import type { User } from '../accounts.js';
import type { AuthServices } from '../index.js';

/**
 * The pages: those of a signed-in user pass the session check before any of it is sent, the
 * administrators' the role check too (a user's browser gets a page saying it may not, with 403).
 * Like every answer of the service, none is stored: Back after logout asks again.
 */
export function pageRoutes({ signedIn, views, spa, production }: AuthServices) {
  // helmet's headers for a document, its policy allowing what the pages load.
  const PAGE = {
    internal: true,
    use: [documentHeaders({ production, allow: spa.csp }), compressPages()],
  };
  const signedInPage = (
    path: `/${string}`,
    show: (user: User, sessionId: string) => Promise<PageState>,
  ) =>
    route(`GET ${path}`, PAGE, async (ctx) => {
      const found = await signedIn(ctx);
      if (!found) return ctx.redirect('/login');
      const { user, sessionId } = found;
      if (!path.startsWith('/admin/') || user.role === 'admin')
        return spa.page(ctx, await show(user, sessionId));
      ctx.status = 403;
      return spa.page(ctx, { page: 'forbidden', user });
    });

  return [
    route('GET /', PAGE, (ctx) => ctx.redirect('/dashboard')),
    route('GET /login', PAGE, (ctx) => spa.page(ctx, { page: 'login' })),
    signedInPage('/dashboard', async (user) => ({ page: 'dashboard', user })),
    signedInPage('/admin/users', async (user, sessionId) => ({
      page: 'users',
      user,
      accounts: await views.overview(sessionId),
    })),
    signedInPage('/admin/settings', async (user) => ({
      page: 'settings',
      user,
      settings: views.settings,
    })),
  ];
}
