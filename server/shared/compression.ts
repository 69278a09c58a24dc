import type { Middleware } from 'koa';
import compress from 'koa-compress';

/** What browsers load as text: pages, scripts, stylesheets, SVG images. */
const BROWSER_TEXT = /^(text\/(html|css|javascript)|application\/javascript|image\/svg\+xml)\b/;

/**
 * Wraps the middleware that answers what browsers load (the pages, Swagger UI's files, and
 * `/openapi.json`, whose route asks for it with `ctx.compress = true`) so that its answers are
 * sent brotli, else gzip, as the request's Accept-Encoding allows (with `Vary: Accept-Encoding`).
 * API answers never pass through it: they are small, or streamed with backpressure (a long
 * `GET /notes`), which a compressor in between would buffer; they never vary with the request's
 * Accept-Encoding, so they say nothing about it and skip the compressor's checks. Files
 * compressed already (the pages' assets, at build time) pass untouched. zstd and deflate are
 * left out so that every answer is brotli or gzip whatever Node's version offers, as the
 * pre-compressed files are.
 */
export function compression(): (middleware: Middleware) => Middleware {
  const compressor = compress({ filter: (type) => BROWSER_TEXT.test(type), zstd: false, deflate: false });
  return (middleware) => (ctx, next) => compressor(ctx, () => middleware(ctx, next));
}
