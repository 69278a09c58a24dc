import type { Middleware } from 'koa';
import compress from 'koa-compress';

/** What browsers load as text: pages, scripts, stylesheets, SVG images. */
const BROWSER_TEXT = /^(text\/(html|css|javascript)|application\/javascript|image\/svg\+xml)\b/;

/**
 * Brotli, else gzip, as the request's Accept-Encoding allows (with `Vary: Accept-Encoding`), for
 * what browsers load: the pages, Swagger UI's files, and `/openapi.json`, whose route asks for
 * it (`ctx.compress = true`). API answers are sent as they are: they are small, or streamed
 * with backpressure (a long `GET /notes`), which a compressor in between would buffer. Files
 * compressed already (the pages' assets, at build time) pass untouched. zstd and deflate are
 * left out so that every answer is brotli or gzip whatever Node's version offers, as the
 * pre-compressed files are.
 */
export function compression(): Middleware {
  return compress({ filter: (type) => BROWSER_TEXT.test(type), zstd: false, deflate: false });
}
