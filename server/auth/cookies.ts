import type { Context } from 'koa';

export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
  path?: string;
}

/**
 * Written by hand rather than with ctx.cookies, which would add an Expires the spec does not list
 * and refuse `Secure` when TLS ends at a proxy in front.
 */
export function cookie(
  name: string,
  value: string,
  { maxAgeSeconds, secure, path = '/' }: CookieOptions,
): string {
  return (
    `${name}=${value}; Max-Age=${maxAgeSeconds}; ` +
    `Path=${path}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
  );
}

/**
 * Every non-empty value of cookie `name`, in order: one planted for a sibling path or domain
 * cannot hide the real one, since the caller tries each.
 */
export function cookieValues(ctx: Context, name: string): string[] {
  return (ctx.get('cookie') || '').split(';').flatMap((pair) => {
    const separator = pair.indexOf('=');
    if (separator === -1 || pair.slice(0, separator).trim() !== name) return [];
    return pair.slice(separator + 1).trim() || [];
  });
}
