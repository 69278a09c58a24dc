import type { Context } from 'koa';
import proxyaddr from 'proxy-addr';
import type { Edge } from './config.js';
import { badRequest } from './errors.js';
import { FewValues } from './fewValues.js';

export const INVALID_HOST = 'Invalid Host header';

/**
 * What every request meets first: the client's address and scheme as the trusted proxies in
 * front report them (walking X-Forwarded-For from the right, never believing what the client
 * itself wrote; Koa believes X-Forwarded-Proto and -Host only with `app.proxy`, set when
 * proxies are trusted), and the Host allowlist (against DNS rebinding: a page of another site
 * whose name points at this server). The check throws a 400 for a Host not allowed.
 */
export function edgeCheck({ allowedHosts, trustProxy }: Edge): (ctx: Context) => void {
  const trust =
    trustProxy === undefined
      ? undefined
      : typeof trustProxy === 'number'
        ? (_: string, hop: number) => hop < trustProxy
        : proxyaddr.compile(trustProxy);
  const allowed = allowedHosts && new Set(allowedHosts);
  const checked = (ctx: Context): boolean => isAllowed(ctx.host, allowed!);
  // Without trusted proxies the Host header alone names the host, so the verdict on each of the
  // few values clients send is kept (working it out through Koa costs most of a microsecond);
  // with them, X-Forwarded-Host may name it, and each request is checked.
  const verdicts = new FewValues<boolean>();
  const hostAllowed = trust
    ? checked
    : (ctx: Context) => verdicts.of(ctx.req.headers.host ?? '', checked, ctx);
  return (ctx) => {
    if (trust) {
      ctx.request.ip = proxyaddr(ctx.req, trust);
      if (!trust(ctx.req.socket.remoteAddress ?? '', 0)) {
        // Not from a trusted proxy: what these headers claim is the client's own word.
        delete ctx.req.headers['x-forwarded-proto'];
        delete ctx.req.headers['x-forwarded-host'];
      }
    }
    if (allowed && !hostAllowed(ctx)) throw badRequest(INVALID_HOST);
  };
}

/**
 * `localhost` in the list allows `localhost` and `localhost:<port>`; an entry with a port allows
 * exactly it.
 */
function isAllowed(host: string, allowed: Set<string>): boolean {
  const named = host.toLowerCase();
  return allowed.has(named) || allowed.has(named.replace(/:\d+$/, ''));
}
