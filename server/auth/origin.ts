import type { Context } from 'koa';

/**
 * Whether a page of another site sent the request. Clients that send no Origin are not browsers.
 * Hosts are compared, not schemes: TLS may end at a proxy that is not trusted to say so.
 */
export function isForeignOrigin(ctx: Context): boolean {
  const origin = ctx.get('origin');
  if (origin === '') return false;
  // URL.parse gives null for "null", which sandboxed pages send.
  return URL.parse(origin)?.host !== ctx.host;
}
