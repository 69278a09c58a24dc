import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Context } from 'koa';
import Negotiator from 'negotiator';
import { BROWSER_TEXT } from './headers.js';

type Encoding = 'br' | 'gzip' | 'identity';
const ENCODINGS = ['br', 'gzip'];
// Below this koa-compress sends a body as it is: compressing gains nothing.
const THRESHOLD_BYTES = 1024;
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

// Brotli at 9: near the best level's size, in a tenth of its time.
const COMPRESS = {
  br: (bytes: Buffer) =>
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 9,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes: Buffer) => gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }),
};

/** A body the same for every request, compressed once per encoding, not at each request. */
export class FixedBody {
  readonly #variants = new Map<Encoding, Promise<Buffer>>();

  constructor(
    readonly type: string,
    private readonly read: () => Buffer | Promise<Buffer>,
  ) {}

  async bytes(wanted: Encoding): Promise<{ encoding: Encoding; bytes: Buffer }> {
    const identity = await this.#variant('identity', async () => this.read());
    const compressible = BROWSER_TEXT.test(this.type) || /^application\/json\b/.test(this.type);
    if (wanted === 'identity' || identity.length < THRESHOLD_BYTES || !compressible)
      return { encoding: 'identity', bytes: identity };
    return {
      encoding: wanted,
      bytes: await this.#variant(wanted, () => COMPRESS[wanted](identity)),
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

// Negotiator 1 takes the server's preference among encodings rated alike (Chrome's `gzip, deflate,
// br, zstd` gets brotli); its published types describe 0.6, which did not.
type EncodingChoice = (
  this: Negotiator,
  available: string[],
  options: { preferred: string[] },
) => Encoding | undefined;

/** Answers with a fixed body, encoded as koa-compress would choose it (`*` is gzip). */
export async function sendFixed(ctx: Context, body: FixedBody): Promise<void> {
  ctx.vary('Accept-Encoding');
  const accepted = ctx.get('Accept-Encoding');
  const negotiator = new Negotiator({
    headers: { 'accept-encoding': accepted === '*' ? 'gzip' : accepted || 'identity' },
  });
  const wanted = (negotiator.encoding as EncodingChoice).call(negotiator, ENCODINGS, {
    preferred: ENCODINGS,
  });
  const { encoding, bytes } = await body.bytes(wanted ?? 'identity');
  ctx.body = bytes;
  ctx.type = body.type;
  if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
}
