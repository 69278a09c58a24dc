/** The body of a 422 answer of the 8000 notes service: Pydantic's entries under `detail`. */
export const validationError = (...detail: unknown[]) => ({ detail });

// Pydantic's entries, word for word as the FastAPI peer answered them.
export const missing = (loc: (string | number)[], input: unknown) => ({
  type: 'missing',
  loc,
  msg: 'Field required',
  input,
});
export const notAString = (field: string, input: unknown) => ({
  type: 'string_type',
  loc: ['body', field],
  msg: 'Input should be a valid string',
  input,
});
export const tooLong = (field: string, input: string) => ({
  type: 'string_too_long',
  loc: ['body', field],
  msg: 'String should have at most 100 characters',
  input,
  ctx: { max_length: 100 },
});
export const notAnObject = (input: unknown) => ({
  type: 'model_attributes_type',
  loc: ['body'],
  msg: 'Input should be a valid dictionary or object to extract fields from',
  input,
});
export const jsonInvalid = (position: number, error: string) => ({
  type: 'json_invalid',
  loc: ['body', position],
  msg: 'JSON decode error',
  input: {},
  ctx: { error },
});
export const intParsing = (input: string) => ({
  type: 'int_parsing',
  loc: ['path', 'note_id'],
  msg: 'Input should be a valid integer, unable to parse string as an integer',
  input,
});
export const nulCharacter = (field: string, input: string) => ({
  type: 'value_error',
  loc: ['body', field],
  msg: 'Value error, String should not contain the NUL character (U+0000)',
  input,
  ctx: { error: 'String should not contain the NUL character (U+0000)' },
});
