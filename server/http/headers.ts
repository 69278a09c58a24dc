import type { Middleware } from 'koa';
import compress from 'koa-compress';
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
 */
export const API_HEADERS = (production: boolean): Record<string, string> => ({
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  ...(production && { 'Strict-Transport-Security': HSTS }),
});

/** What browsers load as text: pages, scripts, stylesheets, SVG. */
export const BROWSER_TEXT =
  /^(text\/(html|css|javascript)|application\/javascript|image\/svg\+xml)\b/;

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

/**
 * koa-compress for a page rendered per request: brotli, else gzip (the encodings of the files
 * compressed at build time), for browser text only. The API's answers are never compressed: they
 * are small, or streamed at the client's pace, which a compressor in between would buffer.
 */
export const compressPages = () =>
  compress({ filter: (type) => BROWSER_TEXT.test(type), zstd: false, deflate: false });
