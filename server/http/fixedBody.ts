import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Context } from 'koa';
import Negotiator from 'negotiator';
import { BROWSER_TEXT } from './headers.js';
/**
 * A fixed body is compressed when browsers load it as text, or when it is JSON (the OpenAPI
 * document).
 */
const compressible = (type: string) => BROWSER_TEXT.test(type) || /^application\/json\b/.test(type);
/** Smaller bodies go as they are, as koa-compress sends them: compressing gains nothing. */
const THRESHOLD_BYTES = 1024;
/** Brotli, else gzip: the encodings every answer uses, whatever Node's version offers. */
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number] | 'identity';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Each fixed body is compressed once per process: brotli at quality 9 (Swagger UI's 1.7 MB bundle
 * in about 0.15 s, within a tenth of the best level's size, which takes seconds), gzip at its best.
 */
const COMPRESSORS: Record<Exclude<Encoding, 'identity'>, (bytes: Buffer) => Promise<Buffer>> = {
  br: (bytes) =>
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 9,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes) => gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }),
};

/**
 * A body that is the same for every request (Swagger UI's files, a service's OpenAPI document
 * and docs page), set as `ctx.body` by a route behind `compression()`. It is read and compressed
 * at its first request, once per encoding, and then sent from memory with its length. Compressed
 * per request, Swagger UI's bundle cost 64 ms of CPU each time: a client asking for it again and
 * again took the process's CPU (other clients' answers fell tenfold) for almost nothing.
 */
export class FixedBody {
  readonly #variants = new Map<Encoding, Promise<Buffer>>();

  constructor(
    readonly type: string,
    private readonly read: () => Buffer | Promise<Buffer>,
  ) {}

  /** The body in `encoding`, or as it is where compressing it gains nothing. */
  async bytes(wanted: Encoding): Promise<{ encoding: Encoding; bytes: Buffer }> {
    const identity = await this.#variant('identity', async () => this.read());
    if (wanted === 'identity' || identity.length < THRESHOLD_BYTES || !compressible(this.type))
      return { encoding: 'identity', bytes: identity };
    return {
      encoding: wanted,
      bytes: await this.#variant(wanted, () => COMPRESSORS[wanted](identity)),
    };
  }

  #variant(encoding: Encoding, make: () => Promise<Buffer>): Promise<Buffer> {
    let variant = this.#variants.get(encoding);
    if (!variant) {
      variant = make();
      this.#variants.set(encoding, variant);
      // A failed read (a file gone) is tried again by the next request.
      variant.catch(() => this.#variants.delete(encoding));
    }
    return variant;
  }
}

// Negotiator 1 takes the server's preference among encodings a client rates alike (Chrome sends
// `gzip, deflate, br, zstd`: brotli is chosen); its published types describe 0.6, which did not.
type EncodingChoice = (
  this: Negotiator,
  available: readonly string[],
  options: { preferred: readonly string[] },
) => string | undefined;

/**
 * The encoding of a fixed body's answer, chosen as koa-compress chooses (`*` means gzip, none means
 * identity).
 */
function negotiated(ctx: Context): Encoding {
  const accepted = ctx.get('Accept-Encoding');
  const negotiator = new Negotiator({
    headers: { 'accept-encoding': accepted === '*' ? 'gzip' : accepted || 'identity' },
  });
  return ((negotiator.encoding as EncodingChoice).call(negotiator, ENCODINGS, {
    preferred: ENCODINGS,
  }) ?? 'identity') as Encoding;
}

/**
 * Answers with a fixed body, brotli, else gzip, as the request's Accept-Encoding allows (with
 * `Vary: Accept-Encoding`); koa-compress then leaves it as it is.
 */
export async function sendFixed(ctx: Context, body: FixedBody): Promise<void> {
  ctx.vary('Accept-Encoding');
  const { encoding, bytes } = await body.bytes(negotiated(ctx));
  ctx.body = bytes;
  ctx.type = body.type;
  if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
}
