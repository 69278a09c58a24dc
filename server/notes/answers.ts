import type { Context } from 'koa';
import { STORAGE_FULL } from '../db/pool.js';
import { HttpError, notFound, tooManyRequests } from '../http/errors.js';
import type { Outcome } from '../http/route.js';
import type { IdRange } from './list.js';
import { isCurrent } from './preconditions.js';
import type { NoteTable, RenderedNote, Written } from './table.js';
import type { WriteBudget } from './writeBudget.js';

/**
 * How both notes services answer with their notes, whatever words each uses: the ETag beside
 * every note, 304 for a copy the client holds, 412 for a write whose If-Match no longer holds,
 * pages of the list, and the write budget.
 */

export const PRECONDITION_FAILED =
  'The note has changed (or was deleted) since the version If-Match names: nothing was changed';

/** Answers with a note and its ETag. */
export function sendNote(ctx: Context, status: number, note: RenderedNote): void {
  ctx.status = status;
  ctx.type = 'json';
  ctx.body = note.json;
  ctx.set('ETag', note.etag);
}

/** A read of a note: 304 (no body) when If-None-Match names it as it is, else the note. */
export function sendRead(ctx: Context, note: RenderedNote): void {
  if (!isCurrent(ctx, note.etag)) return sendNote(ctx, 200, note);
  ctx.status = 304;
  ctx.set('ETag', note.etag);
}

/** What a conditional write did: its result, or the 404 (in the service's words) or 412 it met. */
export function written<T>(outcome: Written<T>, notFoundMessage: string): T {
  if ('done' in outcome) return outcome.done;
  if ('missing' in outcome) throw notFound(notFoundMessage);
  throw new HttpError(412, PRECONDITION_FAILED);
}

/** The most notes a page holds. */
export const PAGE_LIMIT = 1000;

/**
 * `GET /notes`: every note, as the specs say, or, asked with `limit` (and `before`), one page of
 * them below `before`, with a Link to the next while older notes remain.
 */
export async function sendList(
  ctx: Context,
  table: NoteTable,
  list: (ctx: Context, range: IdRange) => Promise<void>,
  { limit, before = 2 ** 53 }: { limit?: number; before?: number },
): Promise<void> {
  if (limit === undefined) return list(ctx, { below: before, from: 0 });
  const page = await table.page(before, limit);
  if (!page) {
    ctx.body = [];
    return;
  }
  if (page.more) ctx.set('Link', `</notes?limit=${limit}&before=${page.range.from}>; rel="next"`);
  await list(ctx, page.range);
}

const overBudget = (wait: number) =>
  `This address has written its share (NOTES_WRITE_BYTES_PER_MINUTE): try again in ${wait} s`;

/** Takes what a write adds to the stored bytes from the client's budget, or refuses it (429). */
export function spend(budget: WriteBudget, client: string, bytes: number): void {
  const wait = budget.take(client, bytes);
  if (wait !== undefined) throw tooManyRequests(overBudget(wait), wait);
}

/** The Link header of a page that older notes follow, as the OpenAPI document shows it. */
export const NEXT_PAGE = {
  Link: {
    description: 'With `limit`, while older notes remain: `</notes?limit=N&before=ID>; rel="next"`',
    schema: { type: 'string' },
  },
};

/**
 * The failures the note routes of both services share, as the OpenAPI document shows them: each
 * body in the service's shape (`failure`), the 404 in its own words.
 */
export function noteFailures(
  failure: (description: string, example: string) => Outcome,
  notFoundMessage: string,
) {
  return {
    missing: { 404: failure('No note has this id', notFoundMessage) },
    capped: {
      507: failure(
        'The storage limit (NOTES_MAX_BYTES) would be passed: nothing was stored',
        STORAGE_FULL,
      ),
    },
    preconditioned: {
      412: failure(
        'If-Match names a version the note no longer has (or the note was deleted): nothing was changed',
        PRECONDITION_FAILED,
      ),
    },
    budgeted: {
      429: {
        ...failure(
          'This client address has stored its NOTES_WRITE_BYTES_PER_MINUTE: nothing was stored',
          overBudget(12),
        ),
        headers: {
          'Retry-After': {
            description: 'Seconds until the write fits the budget again',
            schema: { type: 'integer' },
          },
        },
      },
    },
    listed: {
      429: {
        ...failure(
          'This client address streams two full lists already',
          'This address reads 2 lists already: try again in 1 s',
        ),
        headers: {
          'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
        },
      },
    },
  };
}
