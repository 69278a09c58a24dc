import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import { MalformedJsonError, badRequest, payloadTooLarge, unsupportedMediaType } from './errors.js';

/** What a request carried, as the services need to tell it apart. */
export type RequestBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'empty' }
  /** Sent with a content type other than JSON (or none): kept as text, never parsed. */
  | { kind: 'other'; raw: string; contentType: string | undefined };

/** Reads a request's body; see `bodyReader`. */
export type ReadBody = (ctx: Context) => Promise<RequestBody>;

/**
 * A reader of request bodies up to `limitBytes`. Only JSON content types are parsed (any JSON
 * value, not only objects: the schemas say what shape they want). Failures become the shared
 * errors: 413 for an oversized body, MalformedJsonError for JSON that does not parse, 415 for an
 * unknown charset.
 */
export function bodyReader({ limitBytes }: { limitBytes: number }): ReadBody {
  const parse = bodyParser({
    enableTypes: ['json', 'text'],
    // Every other media type is read as text so that error messages can quote it.
    extendTypes: { text: ['*/*'] },
    jsonStrict: false,
    jsonLimit: limitBytes,
    textLimit: limitBytes,
  } as Parameters<typeof bodyParser>[0]);

  return async (ctx) => {
    const hasBody = ctx.request.length !== undefined || ctx.get('transfer-encoding') !== '';
    const declared = ctx.get('content-type') || undefined;
    if (hasBody && !declared) {
      // A body without a content type is still read (as text), as FastAPI does.
      ctx.req.headers['content-type'] = 'application/octet-stream';
    }
    try {
      await parse(ctx, async () => undefined);
    } catch (error) {
      const text = withPrototypeKeys(error);
      if (text === undefined) throw translateParseError(error);
      // Valid JSON with a "__proto__" key, which the parser refuses outright: read it as if
      // the key were absent, as every other unknown key is ignored.
      ctx.request.body = JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value));
      (ctx.request as { rawBody?: string }).rawBody = text;
    }
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (!hasBody || raw === undefined || raw === '') return { kind: 'empty' };
    if (!ctx.request.is('json')) return { kind: 'other', raw, contentType: declared };
    rejectDeepNesting(raw);
    return { kind: 'json', value: ctx.request.body };
  };
}

/**
 * No request of these services nests JSON more than a few levels; a body nested thousands deep
 * (which JSON.parse accepts) would overflow the stack of everything that walks it later:
 * validation messages, error bodies that echo the input. It is refused as malformed.
 */
export const MAX_JSON_DEPTH = 64;

function rejectDeepNesting(text: string): void {
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
        throw new MalformedJsonError(codePointOffset(text, i), `Nesting deeper than ${MAX_JSON_DEPTH} levels`);
      }
    } else if (char === ']' || char === '}') {
      depth--;
    }
  }
}

/** The body text when the parser refused it only for a "__proto__" key (prototype poisoning). */
function withPrototypeKeys(error: unknown): string | undefined {
  const { message, body } = error as { message?: string; body?: unknown };
  return typeof body === 'string' && message === 'Object contains forbidden prototype property' ? body : undefined;
}

function translateParseError(error: unknown): Error {
  const failure = error as { status?: number; type?: string; body?: unknown; message?: string };
  if (failure.status === 413) return payloadTooLarge();
  if (failure.status === 415) return unsupportedMediaType(failure.message ?? 'Unsupported charset');
  if (error instanceof SyntaxError && typeof failure.body === 'string') {
    return locateJsonError(failure.body, error);
  }
  return badRequest('Request body could not be read');
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
