import type { Context } from 'koa';

/** What a precondition header asks: any current note (`*`), or one of these entity tags. */
export type Condition = 'any' | string[];

const TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
// RFC 9110's list syntax: tags separated by commas, empty elements allowed.
const LIST = new RegExp(`^[ \\t]*(?:${TAG}[ \\t]*)?(?:,[ \\t]*(?:${TAG}[ \\t]*)?)*$`);

/** The tags a header names; a header of any other form names none. */
function condition(value: string): Condition | undefined {
  if (value.trim() === '') return undefined;
  if (value.trim() === '*') return 'any';
  return LIST.test(value) ? (value.match(new RegExp(TAG, 'g')) ?? []) : [];
}

/** The request's If-Match, for a write: compared strongly, so a weak tag never matches. */
export const ifMatch = (ctx: Context) => condition(ctx.get('if-match'));

/** Whether If-None-Match names the current note (weak comparison: `W/` aside). */
export function isCurrent(ctx: Context, etag: string): boolean {
  const wanted = condition(ctx.get('if-none-match'));
  return wanted === 'any' || (wanted?.some((tag) => tag.replace(/^W\//, '') === etag) ?? false);
}

/** The tags a write accepts: null for none to check (no If-Match, or `*`: the note exists). */
export const acceptedTags = (wanted: Condition | undefined) =>
  wanted === undefined || wanted === 'any' ? null : wanted;
