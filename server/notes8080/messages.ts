/** Every user-facing string of the 8080 notes service. */
export const messages = {
  noteNotFound: 'ノートが見つかりません',
  bodyRequired: 'Request body is required: send a JSON object with a "title"',
  bodyNotObject: (received: string) => `Request body must be a JSON object, not ${received}`,
  bodyNotJson: (contentType: string | undefined) =>
    `Request body must be sent with Content-Type: application/json (got ${contentType ?? 'none'})`,
  malformedJson: (position: number, reason: string) =>
    `Request body is not valid JSON: ${reason} (at character ${position})`,
  titleRequired: 'title is required',
  titleNotString: 'title must be a string',
  titleEmpty: 'title must not be empty',
  bodyNotString: 'body must be a string',
} as const;
