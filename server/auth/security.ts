import type { Context, Middleware } from 'koa';
import helmet from 'koa-helmet';
import { forbidden } from '../shared/errors.js';
import { messages } from './messages.js';
import type { CspAllowances } from './spa.js';

/**
 * helmet's headers with a Content-Security-Policy that lets the pages load only from this
 * origin. HSTS and upgrade-insecure-requests only in production mode, where the service sits
 * behind HTTPS; sent over plain HTTP they would break access by address on a LAN.
 */
export function pageHeaders({ production, allow }: { production: boolean; allow: CspAllowances }): Middleware {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", ...(allow.scriptSrc ?? [])],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'", ...(allow.styleSrc ?? [])],
        connectSrc: ["'self'", ...(allow.connectSrc ?? [])],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(production ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: production,
    xFrameOptions: { action: 'deny' },
  });
}

/**
 * The JSON API's headers: what matters for data that no browser renders as a page (OWASP's REST
 * guidance): never stored (answers depend on the session; Back after logout refetches), never
 * sniffed or framed, a policy that allows nothing, no referrer, HSTS in production. helmet's full
 * set for pages would cost /api/me about a third of its CPU time (bench/FINDINGS.md).
 */
export function apiHeaders({ production }: { production: boolean }): Middleware {
  const headers = {
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    ...(production && { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' }),
  };
  return (ctx, next) => {
    ctx.set(headers);
    return next();
  };
}

/**
 * Refuses a request whose Origin header names another site (login CSRF: a foreign page logging
 * the visitor into someone else's account). Browsers send Origin with every POST; clients that
 * send none (curl, scripts) are not browsers and pass. Only the host is compared, because TLS
 * may end at a proxy and this process then sees plain HTTP for an https:// origin.
 */
export function refuseForeignOrigin(ctx: Context): void {
  const origin = ctx.get('origin');
  if (origin && hostOf(origin) !== ctx.host) throw forbidden(messages.foreignOrigin);
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined; // "null" (sandboxed or privacy-sensitive contexts) names no origin of ours.
  }
}
