import type { Context } from 'koa';

export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
  /** `/` unless given: a cookie only one endpoint reads is sent to that endpoint alone. */
  path?: string;
}

/**
 * The `Set-Cookie` value of an HttpOnly, SameSite=Lax cookie, written by hand rather than with
 * ctx.cookies: that would add an Expires attribute the spec does not list, and refuse `Secure`
 * when TLS ends at a proxy in front.
 */
export function cookie(
  name: string,
  value: string,
  { maxAgeSeconds, secure, path = '/' }: CookieOptions,
): string {
  return `${name}=${value}; Max-Age=${maxAgeSeconds}; Path=${path}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * Every non-empty value of cookie `name` the request carries, in order. A browser sends several
 * when cookies of that name were set for several paths or domains, so one planted by a sibling
 * site cannot hide the real one: the caller tries each.
 */
export function cookieValues(ctx: Context, name: string): string[] {
  const header = ctx.req.headers.cookie;
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator === -1 || pair.slice(0, separator).trim() !== name) continue;
    const value = pair.slice(separator + 1).trim();
    if (value) values.push(value);
  }
  return values;
}
