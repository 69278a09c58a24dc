import { Readable } from 'node:stream';
import type { Context } from 'koa';

/** Answers with the JSON array of every item of `batches`, each shown by `present` (see jsonArray). */
export async function respondWithArray<T>(ctx: Context, batches: AsyncIterable<T[]>, present: (item: T) => unknown): Promise<void> {
  ctx.type = 'json';
  ctx.body = await jsonArray(batches, present);
}

/**
 * The JSON text of an array whose items come in batches. A list that fits in one batch is sent as
 * one string (with a Content-Length); a longer one is streamed, so a request holds one batch at a
 * time instead of the rows, their JSON form and the whole text at once. The first batch is read
 * before this returns: a failure there still gets the service's ordinary error answer; one later
 * can only cut the response short (Koa then closes the connection, it never hangs).
 */
async function jsonArray<T>(batches: AsyncIterable<T[]>, present: (item: T) => unknown): Promise<string | Readable> {
  const iterator = batches[Symbol.asyncIterator]();
  // One JSON.stringify per batch, its brackets cut off: no string per item to join.
  const serialize = (batch: T[]) => JSON.stringify(batch.map(present)).slice(1, -1);
  const first = await iterator.next();
  if (first.done) return '[]';
  const second = await iterator.next();
  if (second.done) return `[${serialize(first.value)}]`;

  return Readable.from(
    (async function* () {
      yield `[${serialize(first.value)}`;
      yield `,${serialize(second.value)}`;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield `,${serialize(next.value)}`;
      yield ']';
    })(),
    // Read ahead one batch at most: the response drains at the client's pace, not the database's.
    { highWaterMark: 1 },
  );
}
