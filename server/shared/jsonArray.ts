import { jsonText, textStream, type Answer } from './answer.js';

/**
 * The answer holding the JSON array whose items come in `batches`, each the JSON text of its
 * items joined by commas (as PostgreSQL renders them: see batchesById), as a string or as the
 * bytes it came in. A list that fits in one batch is sent as one string, with a Content-Length;
 * a longer one is streamed, so a request holds one batch at a time. The first batch is read
 * before this returns: a failure there still gets the service's ordinary error answer; one later
 * can only cut the answer short (the connection is closed, it never hangs).
 */
export async function arrayAnswer(
  batches: AsyncIterable<string | Buffer[]>,
  headers?: Answer['headers'],
): Promise<Answer> {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return jsonText(200, '[]', headers);
  const second = await iterator.next();
  if (second.done && typeof first.value === 'string')
    return jsonText(200, `[${first.value}]`, headers);
  return jsonText(
    200,
    textStream(
      (async function* () {
        // The comma apart from its batch: joined, the batch's text would be copied whole once more.
        yield '[';
        yield* pieces(first.value);
        for (let next = second; !next.done; next = await iterator.next()) {
          yield ',';
          yield* pieces(next.value);
        }
        yield ']';
      })(),
    ),
    headers,
  );
}

/**
 * The most UTF-16 units a piece of a streamed answer holds: 32 KiB of ASCII, 96 KiB of UTF-8 at
 * most.
 */
const PIECE = 32 * 1024;
/** The most bytes a piece of bytes holds. */
const PIECE_BYTES = 64 * 1024;

/**
 * A batch in pieces, each taken by the socket as a whole: a reader's progress shows piece by piece
 * (see serve.ts's watch of stalled answers). A cut of text never falls between the two halves of
 * a surrogate pair, which would each become U+FFFD.
 */
function* pieces(batch: string | Buffer[]): Generator<string | Buffer> {
  if (typeof batch !== 'string') {
    for (const bytes of batch)
      for (let start = 0; start < bytes.length; start += PIECE_BYTES)
        yield bytes.subarray(start, start + PIECE_BYTES);
    return;
  }
  const text = batch;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + PIECE, text.length);
    if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
    yield text.slice(start, end);
    start = end;
  }
}
