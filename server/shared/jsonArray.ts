import { jsonText, textStream, type Answer } from './answer.js';

/**
 * The answer holding the JSON array whose items come in `batches`, each the JSON text of its
 * items joined by commas (as PostgreSQL renders them: see batchesById). A list that fits in one
 * batch is sent as one string, with a Content-Length; a longer one is streamed, so a request holds
 * one batch's text at a time. The first batch is read before this returns: a failure there still
 * gets the service's ordinary error answer; one later can only cut the answer short (the
 * connection is closed, it never hangs).
 */
export async function arrayAnswer(batches: AsyncIterable<string>, headers?: Answer['headers']): Promise<Answer> {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return jsonText(200, '[]', headers);
  const second = await iterator.next();
  if (second.done) return jsonText(200, `[${first.value}]`, headers);
  return jsonText(
    200,
    textStream(
      (async function* () {
        yield `[${first.value}`;
        yield `,${second.value}`;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield `,${next.value}`;
        yield ']';
      })(),
    ),
    headers,
  );
}
