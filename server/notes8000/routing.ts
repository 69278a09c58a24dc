import type { Layer } from '@koa/router';
import type { Middleware } from 'koa';
import { HttpError, notFound } from '../shared/errors.js';
import { messages } from './messages.js';

/** The one thing asked of the router: which routes a path has. */
type Routes = { match(path: string, method: string): { path: Pick<Layer, 'methods'>[] } };

/**
 * What Starlette answers when no route takes a request: a known path with another method is
 * 405 with an `Allow` header (listing every method of the path, where Starlette lists only the
 * first route's); a path with a trailing slash whose slash-less form exists is a 307 to that
 * form; anything else is 404.
 */
export function unmatchedRequests(router: Routes): Middleware {
  const methodsFor = (path: string) => [...new Set(router.match(path, 'GET').path.flatMap((layer) => layer.methods))];

  return async (ctx) => {
    const allowed = methodsFor(ctx.path);
    if (allowed.length > 0) throw new HttpError(405, messages.methodNotAllowed, { Allow: allowed.join(', ') });

    const withoutSlash = ctx.path.replace(/\/+$/, '');
    if (withoutSlash !== ctx.path && withoutSlash !== '' && methodsFor(withoutSlash).length > 0) {
      ctx.body = null;
      ctx.status = 307;
      // Absolute, as Starlette writes it; relative when the request named no host.
      const origin = ctx.host ? `${ctx.protocol}://${ctx.host}` : '';
      ctx.set('Location', `${origin}${withoutSlash}${ctx.search}`);
      return;
    }
    throw notFound(messages.notFound);
  };
}
