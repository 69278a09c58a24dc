import Router from '@koa/router';
import type { Middleware } from 'koa';
import { noStore } from './security.js';
import { redirectUnlessSignedIn } from './session.js';
import type { SessionStore } from './sessions.js';
import type { Spa } from './spa.js';

/** The two pages. `/dashboard` passes the session check before any of the page is sent. */
export function pageRoutes({ spa, sessions }: { spa: Spa; sessions: SessionStore }): Middleware {
  const router = new Router();
  const page: Middleware = async (ctx) => {
    ctx.type = 'html';
    ctx.body = await spa.page(ctx.url);
  };
  router.get('/', (ctx) => ctx.redirect('/dashboard'));
  router.get('/login', noStore, page);
  router.get('/dashboard', noStore, redirectUnlessSignedIn(sessions, '/login'), page);
  return router.routes() as Middleware;
}
