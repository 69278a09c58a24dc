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

// HSTS in production only: over plain HTTP it would break access by address on a LAN.
export const API_HEADERS = (production: boolean): Record<string, string> => ({
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  ...(production && { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' }),
});

/** What browsers load as text: pages, scripts, stylesheets, SVG. */
export const BROWSER_TEXT =
  /^(text\/(html|css|javascript)|application\/javascript|image\/svg\+xml)\b/;

/** helmet's headers for an HTML document that loads only from this origin (and `allow`). */
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

/** For pages only: the API's answers are small, or streamed at the client's pace. */
export const compressPages = () =>
  compress({ filter: (type) => BROWSER_TEXT.test(type), zstd: false, deflate: false });
