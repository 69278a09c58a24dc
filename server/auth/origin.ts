import type { Context } from 'koa';

/**
 * Whether the request comes from a page of another origin (cross-site request forgery of a
 * login, a logout or an ending of sessions). Browsers send Origin with every POST and DELETE;
 * clients that send none (curl, scripts) are not browsers and pass.
 * The host and port are compared, not the scheme: TLS may end at a proxy that is not trusted to
 * say so, and this process then sees plain HTTP for an https:// origin.
 */
export function isForeignOrigin(ctx: Context): boolean {
  const origin = ctx.get('origin');
  return origin !== '' && hostOf(origin) !== ctx.host;
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined; // "null" (sandboxed or privacy-sensitive contexts) names no origin of ours.
  }
}
