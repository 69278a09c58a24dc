import type { Context } from 'koa';
import type { HeaderParameter } from '../http/route.js';

/**
 * Conditional requests (RFC 9110 §13) on a note, whose ETag is its version as a strong entity
 * tag (`"3"`): `If-None-Match` makes a read answer 304 when the client's copy is current;
 * `If-Match` makes a write fail with 412 when the note changed (or went away) since the client
 * read it, so that two people editing one note cannot erase each other's change unseen.
 */

/** What a precondition header asks: any current representation (`*`), or one of these tags. */
export type Condition = 'any' | string[];

/** One entity tag, `W/` for a weak one, and the comma or end after it (RFC 9110 §8.8.3). */
const TAG = /^[ \t]*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(,|$)/;

/**
 * The tags of a header as RFC 9110's list syntax has them: `*`, or entity tags separated by
 * commas (empty elements allowed). A header of any other form names no representation.
 */
function condition(value: string): Condition | undefined {
  if (value.trim() === '') return undefined;
  if (value.trim() === '*') return 'any';
  const tags: string[] = [];
  for (let rest = value; rest.trim() !== '';) {
    const empty = /^[ \t]*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const tag = TAG.exec(rest);
    if (!tag) return [];
    tags.push(`${tag[1] ?? ''}${tag[2]}`);
    rest = rest.slice(tag[0].length);
  }
  return tags;
}

/** The request's If-Match, for a write: compared strongly, so a weak tag never matches. */
export const ifMatch = (ctx: Context) => condition(ctx.get('if-match'));

/** Whether If-None-Match names the current representation (weak comparison: `W/` aside). */
export function isCurrent(ctx: Context, etag: string): boolean {
  const wanted = condition(ctx.get('if-none-match'));
  return wanted === 'any' || (wanted?.some((tag) => tag.replace(/^W\//, '') === etag) ?? false);
}

/** The tags a write accepts: null for none to check (no If-Match, or `*`: the note exists). */
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
