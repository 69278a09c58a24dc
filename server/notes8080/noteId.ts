/** The largest value of the `id` column (PostgreSQL `integer`). */
const MAX_ID = 2_147_483_647;

/**
 * The note id a path segment names, or undefined when it cannot name one: anything but a
 * positive decimal integer within the column's range (`abc`, `1.5`, `-1`, `0`, `2147483648`)
 * names no note, so the caller answers 404 rather than 400 (issue 2).
 */
export function parseNoteId(segment: string): number | undefined {
  if (!/^[0-9]{1,10}$/.test(segment)) return undefined;
  const id = Number(segment);
  return id >= 1 && id <= MAX_ID ? id : undefined;
}
