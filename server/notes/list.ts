import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Database } from '../db/pool.js';
import { tooManyRequests } from '../http/errors.js';
import { clientKey } from '../http/clientAddress.js';
import type { NoteShape } from './table.js';

/** What one batch of a list holds: this many rows, or about this many bytes, whichever first. */
const BATCH_ROWS = 250;
const BATCH_BYTES = 1024 * 1024;
/** The most lists one client address streams at once: past it, 429. */
const LISTS_PER_CLIENT = 2;

/** Ids of a range of notes: below `below`, from `from` up. */
export interface IdRange {
  below: number;
  from: number;
}

/**
 * The rows of `notes` below the id `$1` and from `$4` up, newest first, as many as fit in `$3`
 * bytes of text but never more than `$2` rows, and at least one: their JSON objects joined by
 * commas, with the batch's last id and whether rows follow. One pass: the window measures the
 * candidates, and only the rows that fit are rendered.
 */
const batchSql = ({ textColumn, presented }: NoteShape) =>
  `SELECT min(id)::float8 AS last, count(*) < max(candidates) OR max(candidates) = $2 AS more,
    string_agg(json, ',' ORDER BY id DESC) AS json
  FROM (
    SELECT id, candidates, (SELECT row_to_json(note) FROM (SELECT ${presented}) AS note)::text AS json
    FROM (
      SELECT *, sum(octet_length(title) + octet_length(${textColumn})) OVER newest AS running,
        row_number() OVER newest AS place, count(*) OVER () AS candidates
      FROM (SELECT * FROM notes WHERE id < $1 AND id >= $4 ORDER BY id DESC LIMIT $2) AS candidate
      WINDOW newest AS (ORDER BY id DESC)
    ) AS measured
    WHERE running <= $3 OR place = 1
  ) AS batch`;

/**
 * `GET /notes` answered as a JSON array of every note in `range`, newest first, a batch (a
 * statement of its own: keyset paging) at a time: a long list of large notes holds one batch and
 * no database connection while its reader is slow. A list of one batch is sent as it is; a
 * longer one is streamed at the client's pace, and a client streams at most LISTS_PER_CLIENT at
 * once. The first batch is read before the answer starts, so that its failure still gets the
 * service's error answer; a later one can only cut the answer short.
 */
export function noteLists(db: Database, shape: NoteShape) {
  const batch = { name: `${shape.service}.batch`, text: batchSql(shape) };
  const streaming = new Map<string, number>();

  async function* batches({ below, from }: IdRange): AsyncGenerator<string> {
    for (;;) {
      const { rows } = await db.query<{ last: number; more: boolean; json: string | null }>(batch, [
        below,
        BATCH_ROWS,
        BATCH_BYTES,
        from,
      ]);
      const { last, more, json } = rows[0]!;
      if (json === null) return;
      yield json;
      if (!more) return;
      below = last;
    }
  }

  return async (ctx: Context, range: IdRange): Promise<void> => {
    const all = batches(range);
    const first = await all.next();
    ctx.type = 'json';
    if (first.done) return void (ctx.body = '[]');
    const second = await all.next();
    if (second.done) return void (ctx.body = `[${first.value}]`);
    const client = clientKey(ctx.ip);
    const now = streaming.get(client) ?? 0;
    if (now >= LISTS_PER_CLIENT) {
      await all.return(undefined);
      throw tooManyRequests(`This address reads ${now} lists already: try again in 1 s`, 1);
    }
    streaming.set(client, now + 1);
    const body = Readable.from(pieces([first.value, second.value], all), { objectMode: false });
    body.once('close', () => {
      const left = streaming.get(client)! - 1;
      if (left === 0) streaming.delete(client);
      else streaming.set(client, left);
    });
    ctx.body = body;
  };
}

/**
 * Written to the socket in pieces (32 KiB of ASCII, 96 KiB of UTF-8 at most), so that a slow
 * reader's progress shows (see listen.ts).
 */
const PIECE = 32 * 1024;

/** The JSON array of the batches read already and the rest, in pieces. */
async function* pieces(read: string[], rest: AsyncIterable<string>) {
  yield '[';
  const batches = (async function* () {
    yield* read;
    yield* rest;
  })();
  let comma = false;
  for await (const batch of batches) {
    if (comma) yield ',';
    comma = true;
    for (let start = 0; start < batch.length;) {
      // A cut never falls between the halves of a surrogate pair, which would each become U+FFFD.
      let end = Math.min(start + PIECE, batch.length);
      if (end < batch.length && /[\ud800-\udbff]/.test(batch[end - 1]!)) end--;
      yield batch.slice(start, end);
      start = end;
    }
  }
  yield ']';
}
