import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import { httpError, MalformedJsonError } from './errors.js';

/** The 400 of a body that could not be read (an unknown Content-Encoding, say). */
export const UNREADABLE_BODY = 'Request body could not be read';
/** What @koa/bodyparser decompresses besides identity; any other Content-Encoding is 415. */
export const BODY_ENCODINGS = ['gzip', 'deflate', 'br'];
// Deeper JSON, which JSON.parse accepts, would overflow the stack of whatever walks it later.
const MAX_JSON_DEPTH = 64;

export type RequestBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'empty' }
  /** Sent with a content type other than JSON (or none): kept as text, never parsed. */
  | { kind: 'other'; raw: string; contentType: string | undefined };

export type ReadBody = (ctx: Context) => Promise<RequestBody>;

/** Bodies read by @koa/bodyparser as bytes; JSON is UTF-8, decoded here where a bad byte shows. */
export function bodyReader(limitBytes: number): ReadBody {
  const read = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['*/*'] },
    textLimit: limitBytes,
    // One character per byte: `binary` is handed to Buffer, much faster than iconv-lite's `latin1`.
    encoding: 'binary',
  });

  return async (ctx) => {
    const hasBody = ctx.request.length !== undefined || ctx.get('transfer-encoding') !== '';
    const declared = ctx.get('content-type') || undefined;
    // A body without a content type is still read (as text), as FastAPI does.
    if (hasBody && !declared) ctx.req.headers['content-type'] = 'application/octet-stream';
    const json = hasBody && Boolean(ctx.request.is('json'));
    const charset = hasBody ? ctx.request.charset : '';
    if (json && charset && !/^utf-?8$/i.test(charset))
      throw httpError(415, `Unsupported charset "${charset}": JSON is UTF-8`);
    try {
      await read(ctx, async () => undefined);
    } catch (error) {
      const { status, message } = error as { status?: number; message?: string };
      if (status === 413) throw httpError(413, 'Request body too large');
      if (status === 415) throw httpError(415, message ?? 'Unsupported content encoding');
      throw httpError(400, UNREADABLE_BODY);
    }
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (!hasBody || raw === undefined || raw === '') return { kind: 'empty' };
    const bytes = Buffer.from(raw, 'latin1');
    if (!json) return { kind: 'other', raw: bytes.toString('utf8'), contentType: declared };
    const text = decodeUtf8(bytes);
    rejectDeepNesting(text);
    return { kind: 'json', value: parseJson(text) };
  };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const REPLACEMENT = Buffer.from('\uFFFD');
const BOM = Buffer.from('\uFEFF');

/** The body's text; bytes that are not UTF-8 make it malformed, reported where they start. */
function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    // The decoder without `fatal` puts U+FFFD where the bytes stop being UTF-8.
    let offset = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
    let position = 0;
    for (const char of new TextDecoder().decode(bytes)) {
      if (char === '\uFFFD' && !bytes.subarray(offset, offset + 3).equals(REPLACEMENT)) break;
      offset += Buffer.byteLength(char);
      position++;
    }
    throw new MalformedJsonError(position, 'Invalid UTF-8');
  }
}

/** JSON.parse, with a "__proto__" key ignored as every unknown key is. */
function parseJson(text: string): unknown {
  try {
    return text.includes('"__proto__"')
      ? JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value))
      : JSON.parse(text);
  } catch (error) {
    throw locateJsonError(text, error as SyntaxError);
  }
}

function rejectDeepNesting(text: string): void {
  // Fewer brackets than the limit cannot nest past it: most bodies are not walked at all.
  const opening = /[[{]/g;
  let count = 0;
  while (count <= MAX_JSON_DEPTH && opening.test(text)) count++;
  if (count <= MAX_JSON_DEPTH) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '[' || char === '{') {
      if (++depth > MAX_JSON_DEPTH)
        throw new MalformedJsonError(
          codePoints(text, i),
          `Nesting deeper than ${MAX_JSON_DEPTH} levels`,
        );
    } else if (char === ']' || char === '}') {
      depth--;
    }
  }
}

/** V8's JSON.parse message, reworded the way Python's json module (and so FastAPI) words it. */
const REASONS: [RegExp, string][] = [
  [/Unexpected end of JSON input/, 'Expecting value'],
  [/Unexpected non-whitespace character after JSON/, 'Extra data'],
  [/Expected property name or '}'/, 'Expecting property name enclosed in double quotes'],
  [/Expected ',' or '[}\]]' after/, "Expecting ',' delimiter"],
  [/Expected ':' after property name/, "Expecting ':' delimiter"],
  [/Unterminated string/, 'Unterminated string starting at'],
  [/Bad control character/, 'Invalid control character at'],
  [/Bad (escaped character|Unicode escape)/, 'Invalid \\escape'],
];

function locateJsonError(text: string, { message }: SyntaxError): MalformedJsonError {
  const stated = /at position (\d+)/.exec(message);
  let position = 0;
  if (stated) position = Number(stated[1]);
  else if (/Unexpected end of JSON input/.test(message)) position = text.length;
  else {
    // "Unexpected token 'x', ... is not valid JSON" names the culprit but not where it is.
    const token = /Unexpected token '(.)'/u.exec(message)?.[1];
    if (token !== undefined) position = Math.max(0, text.indexOf(token));
  }
  const reason = REASONS.find(([pattern]) => pattern.test(message))?.[1] ?? 'Expecting value';
  return new MalformedJsonError(codePoints(text, position), reason);
}

const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/g;

/** The code points of `text` (decoded UTF-8: no lone surrogate) before its UTF-16 offset `end`. */
function codePoints(text: string, end: number): number {
  const before = text.slice(0, end);
  return before.length - (before.match(SURROGATE_PAIR)?.length ?? 0);
}
