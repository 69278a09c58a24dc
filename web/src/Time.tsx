/**
 * A moment as the API gives it (ISO 8601, UTC), written out the same way on the server and in
 * the browser, whatever either's time zone, so that the hydrated page matches the HTML.
 */
export function Time({ iso }: { iso: string }) {
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`}</time>;
}
