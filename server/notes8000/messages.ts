/** Every user-facing string of the service: the spec's own, then FastAPI's and Pydantic's wording. */
export const messages = {
  healthy: 'healthy',
  noteNotFound: 'ノートが見つかりません',
  noteDeleted: 'ノートを削除しました',

  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',

  fieldRequired: 'Field required',
  stringType: 'Input should be a valid string',
  stringTooLong: (max: number) => `String should have at most ${max} characters`,
  notAnObject: 'Input should be a valid dictionary or object to extract fields from',
  jsonInvalid: 'JSON decode error',
  intParsing: 'Input should be a valid integer, unable to parse string as an integer',
  intParsingSize: 'Unable to parse input string as an integer, exceeded maximum size',
  valueError: (reason: string) => `Value error, ${reason}`,
  nulCharacter: 'String should not contain the NUL character (U+0000)',
  unpairedSurrogate: 'String should not contain unpaired surrogates',
};
