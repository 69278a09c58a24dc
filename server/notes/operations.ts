import type { HeaderParameter, Outcome, Outcomes } from '../http/route.js';
import { IDEMPOTENCY_KEY } from './idempotency.js';
import { NOTE_NOT_FOUND, PAGE_LIMIT, PRECONDITION_FAILED } from './service.js';
import { STORAGE_FULL } from './table.js';
import { overBudget } from './writeBudget.js';

const text = (description: string) => ({ description, schema: { type: 'string' } });
const header = (name: string, description: string): HeaderParameter => ({
  name,
  in: 'header',
  required: false,
  ...text(description),
});

const IF_MATCH = header(
  'If-Match',
  'The ETag of the note as the client last read it (or `*`, any current note): ' +
    'the write happens only if the note is still that version, checked in the same statement; ' +
    'otherwise 412 and nothing changes.',
);
const IF_NONE_MATCH = header(
  'If-None-Match',
  'ETags of copies the client holds (or `*`): ' +
    'when one is the current note, the answer is 304 with no body.',
);
const ETAG = {
  ETag: text("The note's version as a strong entity tag; it changes with every change of the note"),
};

/** An answer with a note: its ETag beside it. */
export const withETag = (outcome: Outcome) => ({ ...outcome, headers: ETAG });

/**
 * What the OpenAPI operations on notes of both services share, besides their schemas: summaries,
 * headers, and failures in the service's shape (`failure`).
 */
export function noteOperations(failure: (description: string, example: string) => Outcome) {
  const refusal = (description: string, example: string, retryAfter: string) => ({
    ...failure(description, example),
    headers: { 'Retry-After': { description: retryAfter, schema: { type: 'integer' } } },
  });
  const missing = { 404: failure('No note has this id', NOTE_NOT_FOUND) };
  const preconditioned = {
    412: failure(
      'If-Match names a version the note no longer has (or the note was deleted): ' +
        'nothing was changed',
      PRECONDITION_FAILED,
    ),
  };
  const stored = {
    429: refusal(
      'This client address has stored its NOTES_WRITE_BYTES_PER_MINUTE: nothing was stored',
      overBudget(12),
      'Seconds until the write fits the budget again',
    ),
    507: failure(
      'The storage limit (NOTES_MAX_BYTES) would be passed: nothing was stored',
      STORAGE_FULL,
    ),
  };
  return {
    list: (notes: string, page: Outcome) => ({
      summary: 'List Notes',
      description:
        `${notes}, newest \`id\` first; ` +
        `or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), ` +
        `one page of at most ${PAGE_LIMIT} and a Link to the next.`,
      responses: {
        200: {
          ...page,
          headers: {
            Link: text(
              'With `limit`, while older notes remain: `</notes?limit=N&before=ID>; rel="next"`',
            ),
          },
        },
        429: refusal(
          'This client address streams two full lists already',
          'This address reads 2 lists already: try again in 1 s',
          'Seconds to wait',
        ),
      },
    }),
    create: (responses: Outcomes) => ({
      summary: 'Create Note',
      headers: [IDEMPOTENCY_KEY],
      responses: { ...responses, ...stored },
    }),
    read: (note: Outcome) => ({
      summary: 'Get Note',
      headers: [IF_NONE_MATCH],
      responses: {
        200: withETag(note),
        304: withETag({ description: 'The copy If-None-Match names is current' }),
        ...missing,
      },
    }),
    update: (summary: string, description: string, note: Outcome) => ({
      summary,
      description,
      headers: [IF_MATCH],
      responses: { 200: withETag(note), ...missing, ...preconditioned, ...stored },
    }),
    remove: (deleted: Outcomes) => ({
      summary: 'Delete Note',
      headers: [IF_MATCH],
      responses: { ...deleted, ...missing, ...preconditioned },
    }),
  };
}
