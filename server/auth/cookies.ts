import type { Context } from 'koa';

// The browser's credentials: the cookies the service sets and reads, and the Origin check that
// keeps pages of other sites from using them.

/** The spec's session cookie, and the device cookie (see DeviceTrust), sent only to log in. */
export const SESSION = 'token';
export const DEVICE = 'device';

type CookieOptions = { maxAgeSeconds: number; secure: boolean; path?: string };

// By hand: ctx.cookies would add an Expires the spec does not list, and refuse `Secure` behind a
// proxy that ends TLS.
export const header = (name: string, value: string, options: CookieOptions) =>
  `${name}=${value}; Max-Age=${options.maxAgeSeconds}; Path=${options.path ?? '/'}; ` +
  `HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;

// Every non-empty value of cookie `name`, in order: one planted for a sibling path or domain
// cannot hide the real one, since the caller tries each.
export const values = (ctx: Context, name: string): string[] =>
  ctx
    .get('cookie')
    .split(';')
    .flatMap((pair) => {
      const [key, ...value] = pair.split('=');
      return key!.trim() === name && value.length > 0 ? value.join('=').trim() || [] : [];
    });

export const sessionTokens = (ctx: Context) => values(ctx, SESSION);

/**
 * Whether a page of another site sent the request; clients that send no Origin are not browsers.
 * Hosts are compared, not schemes: TLS may end at a proxy not trusted to say so. URL.parse gives
 * null for "null", which sandboxed pages send.
 */
export const isForeignOrigin = (ctx: Context) =>
  ctx.get('origin') !== '' && URL.parse(ctx.get('origin'))?.host !== ctx.host;
