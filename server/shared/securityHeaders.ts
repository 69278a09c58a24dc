import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/** Sources a document may load beyond its own origin, added to its Content-Security-Policy. */
export interface CspAllowances {
  scriptSrc?: string[];
  styleSrc?: string[];
  connectSrc?: string[];
  workerSrc?: string[];
}

/**
 * HSTS is sent in production mode only, where the service sits behind HTTPS: over plain HTTP it
 * would break access by address on a LAN.
 */
const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The headers of every answer of every service, what matters for data that no browser renders
 * as a page (OWASP's REST guidance): never sniffed or framed, a policy that allows nothing, no
 * referrer, HSTS in production. Pages and Swagger UI replace them with `documentHeaders`.
 * helmet's full set on every answer would cost GET /api/me about a third of its CPU time.
 */
export function answerHeaders(production: boolean): Record<string, string> {
  return {
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    ...(production && { 'Strict-Transport-Security': HSTS }),
  };
}

/**
 * helmet's headers for an HTML document, with a Content-Security-Policy that lets it load only
 * from this origin (plus `allow`) and never be framed; upgrade-insecure-requests in production.
 */
export function documentHeaders({
  production,
  allow = {},
}: {
  production: boolean;
  allow?: CspAllowances;
}): Middleware {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", ...(allow.scriptSrc ?? [])],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'", ...(allow.styleSrc ?? [])],
        connectSrc: ["'self'", ...(allow.connectSrc ?? [])],
        ...(allow.workerSrc && { workerSrc: ["'self'", ...allow.workerSrc] }),
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(production ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: production && { maxAge: 31_536_000, includeSubDomains: true },
    xFrameOptions: { action: 'deny' },
  });
}
