/** Pydantic's ways of failing to read a string as an integer. */
export type IntParsingFailure = 'int_parsing' | 'int_parsing_size';

/** Pydantic gives up on integer strings longer than this. */
const MAX_INT_STRING_LENGTH = 4300;

/**
 * Reads the `{note_id}` path segment as Pydantic (lax mode) reads a string as an integer:
 * surrounding whitespace ignored, an optional sign, and also `12.000` (zero decimals) or
 * `1_000` (single underscores between digits). Any size is an integer here; one that no note
 * can have (`-1`, `0`, beyond the column) is the store's business, which answers "not found".
 */
export function parseNoteId(segment: string): { id: number } | { failure: IntParsingFailure } {
  const text = segment.trim();
  if (text.length > MAX_INT_STRING_LENGTH) return { failure: 'int_parsing_size' };
  const digits = [text, text.replace(/\.0*$/, ''), withoutUnderscores(text)].find(
    (candidate) => candidate !== undefined && /^[+-]?[0-9]+$/.test(candidate),
  );
  return digits === undefined ? { failure: 'int_parsing' } : { id: Number(digits) };
}

function withoutUnderscores(text: string): string | undefined {
  if (text.startsWith('_') || text.endsWith('_') || text.includes('__')) return undefined;
  return text.replaceAll('_', '');
}
