import type { Context } from 'koa';
import type { HeaderParameter } from './route.js';

/**
 * Conditional requests (RFC 9110 §13) on a note, whose ETag is its version as a strong entity
 * tag (`"3"`): `If-None-Match` makes a read answer 304 when the client's copy is current;
 * `If-Match` makes a write fail with 412 when the note changed (or went away) since the client
 * read it, so that two people editing one note cannot erase each other's change unseen.
 */

/** What a precondition header asks: any current representation (`*`), or one of these tags. */
export type Condition = 'any' | string[];

/**
 * The entity tags of a header: `*`, or each tag of a comma-separated list (weak ones with their
 * `W/`).
 */
function condition(value: string): Condition | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (trimmed === '*') return 'any';
  return [...trimmed.matchAll(/(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g)].map(([tag]) => tag);
}

/** The request's If-Match, for a write: compared strongly, so a weak tag never matches. */
export const ifMatch = (ctx: Context) => condition(ctx.get('if-match'));

/**
 * Whether the request's If-None-Match names the current representation (weak comparison: `W/`
 * aside).
 */
export function isCurrent(ctx: Context, etag: string): boolean {
  const wanted = condition(ctx.get('if-none-match'));
  return (
    wanted === 'any' ||
    (wanted !== undefined && wanted.some((tag) => tag.replace(/^W\//, '') === etag))
  );
}

/**
 * The tags a write's statement accepts: null for none to check (no If-Match, or `*`, which the
 * row's existence settles).
 */
export const acceptedTags = (wanted: Condition | undefined) =>
  wanted === undefined || wanted === 'any' ? null : wanted;

export const IF_MATCH: HeaderParameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'The ETag of the note as the client last read it (or `*`, any current note): the write happens only if the note is still that version, checked in the same statement; otherwise 412 and nothing changes.',
  schema: { type: 'string' },
};

export const IF_NONE_MATCH: HeaderParameter = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'ETags of copies the client holds (or `*`): when one is the current note, the answer is 304 with no body.',
  schema: { type: 'string' },
};

/** The ETag header of an answer, documented. */
export const ETAG_HEADER = {
  ETag: {
    description:
      "The note's version as a strong entity tag; it changes with every change of the note",
    schema: { type: 'string' },
  },
};
