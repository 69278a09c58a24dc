import type { Context } from 'koa';

const NAME = 'token';

interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
}

/**
 * The session cookie, written by hand rather than with ctx.cookies: that would add an Expires
 * attribute the spec does not list, and refuse `Secure` when TLS ends at a proxy in front.
 */
function cookie(value: string, { maxAgeSeconds, secure }: CookieOptions): string {
  const attributes = [`Max-Age=${maxAgeSeconds}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (secure) attributes.push('Secure');
  return [`${NAME}=${value}`, ...attributes].join('; ');
}

export function setSessionCookie(ctx: Context, token: string, options: CookieOptions): void {
  ctx.append('Set-Cookie', cookie(token, options));
}

export function deleteSessionCookie(ctx: Context, { secure }: { secure: boolean }): void {
  ctx.append('Set-Cookie', cookie('', { maxAgeSeconds: 0, secure }));
}

/** The token the request carries; an empty `token=` counts as none. */
export function readSessionToken(ctx: Context): string | undefined {
  return ctx.cookies.get(NAME) || undefined;
}
