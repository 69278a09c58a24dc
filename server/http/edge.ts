import type { Middleware } from 'koa';
import proxyaddr from 'proxy-addr';
import type { Edge } from '../config.js';
import { badRequest } from './errors.js';

export const INVALID_HOST = 'Invalid Host header';

/** The client's address as trusted proxies report it, and the Host allowlist (DNS rebinding). */
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
    if (allowed && !isAllowed(ctx.host.toLowerCase(), allowed)) throw badRequest(INVALID_HOST);
    return next();
  };
}

/** `localhost` allows `localhost` with any port; `localhost:8080`, exactly it. */
const isAllowed = (host: string, allowed: Set<string>) =>
  allowed.has(host) || allowed.has(host.replace(/:\d+$/, ''));
