/**
 * Read out by screen readers whenever its text changes (progress, then the result), without
 * taking focus. Always in the document, as a live region must be before its text changes;
 * visible to screen readers only, since the same text shows on the page.
 */
export function LiveRegion({ text }: { text: string }) {
  return (
    <p role="status" className="visually-hidden">
      {text}
    </p>
  );
}
