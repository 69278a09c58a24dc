import type { Middleware } from 'koa';
import proxyaddr from 'proxy-addr';
import type { Edge } from '../config.js';
import { badRequest } from './errors.js';

export const INVALID_HOST = 'Invalid Host header';

/**
 * What every request meets first: the client's address as the trusted proxies in front report it
 * (walking X-Forwarded-For from the right, never believing what the client itself wrote), and
 * the Host allowlist (against DNS rebinding: a page of another site whose name points at this
 * server), which answers 400 for a Host not allowed.
 */
export function edgeCheck({ allowedHosts, trustProxy }: Edge): Middleware {
  const trust =
    trustProxy === undefined
      ? undefined
      : typeof trustProxy === 'number'
        ? (_: string, hop: number) => hop < trustProxy
        : proxyaddr.compile(trustProxy);
  const allowed = allowedHosts && new Set(allowedHosts);
  return (ctx, next) => {
    if (trust) {
      ctx.request.ip = proxyaddr(ctx.req, trust);
      if (!trust(ctx.req.socket.remoteAddress ?? '', 0)) {
        // Not from a trusted proxy: what these headers claim is the client's own word.
        delete ctx.req.headers['x-forwarded-proto'];
        delete ctx.req.headers['x-forwarded-host'];
      }
    }
    if (allowed && !isAllowed(ctx.host, allowed)) throw badRequest(INVALID_HOST);
    return next();
  };
}

/**
 * `localhost` in the list allows `localhost` and `localhost:<port>`; one with a port, exactly it.
 */
function isAllowed(host: string, allowed: Set<string>): boolean {
  const named = host.toLowerCase();
  return allowed.has(named) || allowed.has(named.replace(/:\d+$/, ''));
}
