import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import { HttpError, MalformedJsonError, badRequest, unsupportedMediaType } from './errors.js';

/** The 400 of a body that could not be read (an unknown Content-Encoding, say). */
export const UNREADABLE_BODY = 'Request body could not be read';

/** What a request carried, as the services need to tell it apart. */
export type RequestBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'empty' }
  /** Sent with a content type other than JSON (or none): kept as text, never parsed. */
  | { kind: 'other'; raw: string; contentType: string | undefined };

/** Reads a request's body; see `bodyReader`. */
export type ReadBody = (ctx: Context) => Promise<RequestBody>;

/**
 * A reader of request bodies up to `limitBytes`. @koa/bodyparser reads the bytes (limits,
 * Content-Encoding, the stream's errors); JSON is decoded and parsed here, because JSON is UTF-8
 * (RFC 8259) and the body parser would replace invalid bytes, or read another declared charset,
 * without a word: a JSON body declaring another charset is refused (415), one that is not valid
 * UTF-8 is malformed, and text is stored exactly as sent. Only JSON content types are parsed
 * (any JSON value, not only objects: the schemas say what shape they want); other bodies are
 * kept as text for error messages.
 */
export function bodyReader({ limitBytes }: { limitBytes: number }): ReadBody {
  const read = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['*/*'] },
    textLimit: limitBytes,
    // One character per byte: the bytes as they came, decoded below. Named `binary` (Node's other
    // name for latin1), which the parser's decoder (iconv-lite) hands to Buffer; under `latin1` it
    // maps each byte through a table of its own, a tenth of the body's reading.
    encoding: 'binary',
  });

  return async (ctx) => {
    const hasBody = ctx.request.length !== undefined || ctx.get('transfer-encoding') !== '';
    const declared = ctx.get('content-type') || undefined;
    if (hasBody && !declared) {
      // A body without a content type is still read (as text), as FastAPI does.
      ctx.req.headers['content-type'] = 'application/octet-stream';
    }
    const json = hasBody && Boolean(ctx.request.is('json'));
    const charset = hasBody ? ctx.request.charset : '';
    if (json && charset && !/^utf-?8$/i.test(charset))
      throw unsupportedMediaType(`Unsupported charset "${charset}": JSON is UTF-8`);
    try {
      await read(ctx, async () => undefined);
    } catch (error) {
      throw translateReadError(error);
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

/** The body's text; bytes that are not UTF-8 make it malformed, reported where they start. */
function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    // The longest prefix that is UTF-8 (a character cut at its end aside) ends where the first
    // bad byte is: found by halving, so a large body costs a few passes, not one per byte.
    const validUpTo = (end: number) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, end), { stream: true });
        return true;
      } catch {
        return false;
      }
    };
    let [good, bad] = [0, bytes.length];
    while (bad - good > 1) {
      const middle = (good + bad) >> 1;
      if (validUpTo(middle)) good = middle;
      else bad = middle;
    }
    // The characters before the bad sequence (a character it cut short is not among them).
    const before = new TextDecoder('utf-8').decode(bytes.subarray(0, good), { stream: true });
    throw new MalformedJsonError(codePointOffset(before, before.length), 'Invalid UTF-8');
  }
}

/**
 * JSON.parse, with a "__proto__" key read as if it were absent, as every other unknown key is
 * ignored: nothing downstream can then be tricked into treating it as a prototype.
 */
function parseJson(text: string): unknown {
  try {
    return text.includes('"__proto__"')
      ? JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value))
      : JSON.parse(text);
  } catch (error) {
    throw locateJsonError(text, error as SyntaxError);
  }
}

/**
 * No request of these services nests JSON more than a few levels; a body nested thousands deep
 * (which JSON.parse accepts) would overflow the stack of everything that walks it later:
 * validation messages, error bodies that echo the input. It is refused as malformed.
 */
export const MAX_JSON_DEPTH = 64;

function rejectDeepNesting(text: string): void {
  // Fewer brackets than the limit cannot nest past it: most bodies are not walked at all.
  if (openings(text, MAX_JSON_DEPTH + 1) <= MAX_JSON_DEPTH) return;
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
      if (++depth > MAX_JSON_DEPTH) {
        throw new MalformedJsonError(
          codePointOffset(text, i),
          `Nesting deeper than ${MAX_JSON_DEPTH} levels`,
        );
      }
    } else if (char === ']' || char === '}') {
      depth--;
    }
  }
}

/** The opening brackets (`[` and `{`) of `text`, counted up to `most`. */
function openings(text: string, most: number): number {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (
      let at = text.indexOf(bracket);
      at !== -1 && count < most;
      at = text.indexOf(bracket, at + 1)
    )
      count++;
  }
  return count;
}

/**
 * The Content-Encodings the body parser decompresses, besides `identity`; it refuses any other
 * (415).
 */
export const BODY_ENCODINGS = ['gzip', 'deflate', 'br'];

function translateReadError(error: unknown): Error {
  const failure = error as { status?: number; message?: string };
  if (failure.status === 413) return new HttpError(413, 'Request body too large');
  if (failure.status === 415)
    return unsupportedMediaType(failure.message ?? 'Unsupported content encoding');
  return badRequest(UNREADABLE_BODY);
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

function locateJsonError(text: string, error: SyntaxError): MalformedJsonError {
  const stated = /at position (\d+)/.exec(error.message);
  let utf16Position: number;
  if (stated) {
    utf16Position = Number(stated[1]);
  } else if (/Unexpected end of JSON input/.test(error.message)) {
    utf16Position = text.length;
  } else {
    // "Unexpected token 'x', ... is not valid JSON" names the character but not where it is:
    // the first character that is neither whitespace nor a valid start is the culprit.
    const token = /Unexpected token '(.)'/u.exec(error.message)?.[1];
    const found = token === undefined ? -1 : text.indexOf(token);
    utf16Position = found === -1 ? 0 : found;
  }
  const reason = REASONS.find(([pattern]) => pattern.test(error.message))?.[1] ?? 'Expecting value';
  return new MalformedJsonError(codePointOffset(text, utf16Position), reason);
}

function codePointOffset(text: string, utf16Offset: number): number {
  let points = 0;
  for (let i = 0; i < utf16Offset && i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < utf16Offset) i++;
    points++;
  }
  return points;
}
