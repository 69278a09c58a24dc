import type { Context } from 'koa';
import { jsonText, noBody, type Answer } from './answer.js';
import { HttpError, insufficientStorage, notFound, tooManyRequests } from './errors.js';
import { arrayAnswer } from './jsonArray.js';
import { isCurrent } from './preconditions.js';
import { clientKey } from './clientAddress.js';
import type { noteTable, RenderedNote, WriteOutcome } from './noteTable.js';
import type { Outcome } from './route.js';
import type { WriteBudget } from './writeBudget.js';

/**
 * How both notes services answer with their notes, whatever words each uses: the ETag beside
 * every note, 304 for a copy the client holds, 412 for a write whose If-Match no longer holds,
 * pages of the list, and the write budget.
 */

export const PRECONDITION_FAILED =
  'The note has changed (or was deleted) since the version If-Match names: nothing was changed';

/** A note with its ETag. */
export const noteAnswer = (status: number, [json, etag]: RenderedNote): Answer =>
  jsonText(status, json, { etag });

/** A read of a note: 304 (no body) when If-None-Match names it as it is, else the note. */
export const readAnswer = (ctx: Context, note: RenderedNote): Answer =>
  isCurrent(ctx, note[1]) ? noBody(304, { etag: note[1] }) : noteAnswer(200, note);

/** What a conditional write did: its result, or the 404 (in the service's words) or 412 it met. */
export function written<T>(outcome: WriteOutcome<T>, notFoundMessage: string): T {
  if ('done' in outcome) return outcome.done;
  if ('missing' in outcome) throw notFound(notFoundMessage);
  throw new HttpError(412, PRECONDITION_FAILED);
}

/** The most notes a page holds. */
export const PAGE_LIMIT = 1000;

/**
 * `GET /notes`: every note, as the specs say, or, asked with `limit` and `before`, one page of
 * them, newest first below `before`, and a Link to the next while older notes remain.
 */
export async function listAnswer(
  table: Pick<ReturnType<typeof noteTable>, 'list' | 'page'>,
  { limit, before }: { limit?: number; before?: number },
): Promise<Answer> {
  if (limit === undefined) return arrayAnswer(table.list({ below: before }));
  const page = await table.page(before ?? 2 ** 53, limit);
  if (!page) return jsonText(200, '[]');
  const next = page.more
    ? { link: `</notes?limit=${limit}&before=${page.range.from}>; rel="next"` }
    : undefined;
  return arrayAnswer(table.list(page.range), next);
}

const overBudget = (wait: number) =>
  `This address has written its share (NOTES_WRITE_BYTES_PER_MINUTE): try again in ${wait} s`;

/**
 * Takes what a create or an update adds to the stored bytes (createdBytes, or the texts an update
 * writes) from the client's budget, or refuses it (429) storing nothing.
 */
export function spend(budget: WriteBudget, ctx: Context, bytes: number): void {
  const wait = budget.take(clientKey(ctx.ip), bytes);
  if (wait !== undefined) throw tooManyRequests(overBudget(wait), wait);
}

/**
 * The Link header `listAnswer` gives a page that older notes follow, as the OpenAPI document shows
 * it.
 */
export const NEXT_PAGE = {
  Link: {
    description: 'With `limit`, while older notes remain: `</notes?limit=N&before=ID>; rel="next"`',
    schema: { type: 'string' },
  },
};

/**
 * The failures the note routes of both services share (no such note, the storage limit, a stale
 * If-Match, the write budget) as the OpenAPI document shows them: each body in the service's own
 * shape (`failure`), the 404 in its own words.
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
        insufficientStorage().message,
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
  };
}
