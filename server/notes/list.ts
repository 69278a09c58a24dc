import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Database } from '../db/pool.js';
import { clientKey } from '../http/clientAddress.js';
import { tooManyRequests } from '../http/errors.js';
import type { NoteSql } from './table.js';

const BATCH_ROWS = 250;
const BATCH_BYTES = 1024 * 1024;
const LISTS_PER_CLIENT = 2;
/** A slow reader's progress shows piece by piece (see listen.ts). */
const PIECE = 32 * 1024;

/**
 * The notes below `$1` and from `$4` up, newest first, as many as fit in `$3` bytes of text but
 * at most `$2` and at least one, as JSON objects joined by commas; the last id, and whether more
 * follow. The window measures the candidates, and only the rows that fit are rendered.
 */
const batchSql = ({ textColumn, select }: NoteSql) =>
  `SELECT min(id)::float8 AS last, count(*) < max(candidates) OR max(candidates) = $2 AS more,
    string_agg(json, ',' ORDER BY id DESC) AS json
  FROM (
    SELECT id, candidates,
      (SELECT row_to_json(note) FROM (SELECT ${select}) AS note)::text AS json
    FROM (
      SELECT *, sum(octet_length(title) + octet_length(${textColumn})) OVER newest AS running,
        row_number() OVER newest AS place, count(*) OVER () AS candidates
      FROM (SELECT * FROM notes WHERE id < $1 AND id >= $4 ORDER BY id DESC LIMIT $2) AS candidate
      WINDOW newest AS (ORDER BY id DESC)
    ) AS measured
    WHERE running <= $3 OR place = 1
  ) AS batch`;

/** A page's range of ids (below `below`, from `from` up), and whether older notes follow it. */
const pageSql = `WITH page AS (SELECT id FROM notes WHERE id < $1 ORDER BY id DESC LIMIT $2)
  SELECT max(id) + 1 AS below, min(id) AS "from",
    EXISTS (SELECT 1 FROM notes WHERE id < (SELECT min(id) FROM page)) AS more FROM page`;

/**
 * `GET /notes`: every note, or with `limit` a page below `before` and a Link to the next; read a
 * batch (one statement, keyset paging) at a time, so that a slow reader holds no connection. A
 * list longer than a batch is streamed, at most LISTS_PER_CLIENT at once per client. The first
 * batch is read before the answer starts: its failure still gets the service's error answer.
 */
export function noteLists(db: Database, sql: NoteSql) {
  const batch = { name: `${sql.service}.batch`, text: batchSql(sql) };
  const page = { name: `${sql.service}.page`, text: pageSql };
  const streaming = new Map<string, number>();

  async function* batches({ below, from }: { below: number; from: number }) {
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

  return async (ctx: Context, { limit, before = 2 ** 53 }: { limit?: number; before?: number }) => {
    let range = { below: before, from: 0 };
    if (limit !== undefined) {
      const { rows } = await db.query<{ below: number | null; from: number; more: boolean }>(page, [
        before,
        limit,
      ]);
      const { below, from, more } = rows[0]!;
      if (below === null) return void (ctx.body = []);
      if (more) ctx.set('Link', `</notes?limit=${limit}&before=${from}>; rel="next"`);
      range = { below, from };
    }
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
    ctx.body = body.once('close', () => {
      if (streaming.get(client) === 1) streaming.delete(client);
      else streaming.set(client, streaming.get(client)! - 1);
    });
  };
}

/** The JSON array of the batches read already and the rest, in pieces. */
async function* pieces(read: string[], rest: AsyncIterable<string>) {
  let separator = '[';
  for await (const batch of (async function* () {
    yield* read;
    yield* rest;
  })()) {
    yield separator;
    separator = ',';
    for (let start = 0; start < batch.length;) {
      // A cut between the halves of a surrogate pair would make each U+FFFD.
      let end = Math.min(start + PIECE, batch.length);
      if (end < batch.length && /[\ud800-\udbff]/.test(batch[end - 1]!)) end--;
      yield batch.slice(start, end);
      start = end;
    }
  }
  yield ']';
}
