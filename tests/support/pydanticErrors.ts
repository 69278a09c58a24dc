import { raw, type Options } from './notesServices.js';

// What the 8000 notes service refuses with 422: `{detail}`, Pydantic v2's entries, word for word
// as the FastAPI peer answered them.

export const validationError = (...detail: unknown[]) => ({ detail });

type Loc = (string | number)[];
const entry = (type: string, loc: Loc, msg: string, input: unknown, ctx?: object) =>
  ctx ? { type, loc, msg, input, ctx } : { type, loc, msg, input };
const body = (field: string): Loc => ['body', field];

export const missing = (loc: Loc, input: unknown) => entry('missing', loc, 'Field required', input);
export const notAString = (field: string, input: unknown) =>
  entry('string_type', body(field), 'Input should be a valid string', input);
export const tooLong = (field: string, input: string) =>
  entry('string_too_long', body(field), 'String should have at most 100 characters', input, {
    max_length: 100,
  });
const notADict = 'Input should be a valid dictionary or object to extract fields from';
export const notAnObject = (input: unknown) =>
  entry('model_attributes_type', ['body'], notADict, input);
export const jsonInvalid = (position: number, error: string) =>
  entry('json_invalid', ['body', position], 'JSON decode error', {}, { error });
const notAnInteger = 'Input should be a valid integer, unable to parse string as an integer';
export const intParsing = (input: string) =>
  entry('int_parsing', ['path', 'note_id'], notAnInteger, input);
const tooBig = 'Unable to parse input string as an integer, exceeded maximum size';
export const intParsingSize = (input: string) =>
  entry('int_parsing_size', ['path', 'note_id'], tooBig, input);
const valueError = (field: string, error: string, input: string) =>
  entry('value_error', body(field), `Value error, ${error}`, input, { error });
export const nulCharacter = (field: string, input: string) =>
  valueError(field, 'String should not contain the NUL character (U+0000)', input);

const [a101, emoji101] = ['a'.repeat(101), '😀'.repeat(101)];
const json = (value: unknown) => raw(JSON.stringify(value));
const [note, text] = ['{"title":"x","content":"y"}', '{"title":"no ctype","content":"x"}'];
const nested = `{"title":${'['.repeat(1_000)}${']'.repeat(1_000)},"content":"x"}`;
const badJson = 'Expecting property name enclosed in double quotes';
const [form, nul] = ['title=x&content=y', '{"title":"a\\u0000b","content":"\\u0000"}'];

/** What a create refuses: the request, and the entries of the answer. */
export const invalidCreates: [string, Options, unknown[]][] = [
  ['missing title', raw('{"content":"x"}'), [missing(body('title'), { content: 'x' })]],
  ['missing content', raw('{"title":"x"}'), [missing(body('content'), { title: 'x' })]],
  ['empty object', raw('{}'), [missing(body('title'), {}), missing(body('content'), {})]],
  ['title too long (101 chars)', json({ title: a101, content: 'x' }), [tooLong('title', a101)]],
  ['title of 101 emoji', json({ title: emoji101, content: 'x' }), [tooLong('title', emoji101)]],
  ['title null', raw('{"title":null,"content":"x"}'), [notAString('title', null)]],
  ['title is a number', raw('{"title":123,"content":"x"}'), [notAString('title', 123)]],
  [
    'every failing field, in field order',
    raw('{"content":["x"],"title":5}'),
    [notAString('title', 5), notAString('content', ['x'])],
  ],
  ['invalid JSON', raw('{"title": "x", "content": '), [jsonInvalid(26, 'Expecting value')]],
  ['JSON followed by garbage', raw(`${note} trailing`), [jsonInvalid(28, 'Extra data')]],
  [
    'JSON nested 1,000 levels deep',
    raw(nested),
    [jsonInvalid(72, 'Nesting deeper than 64 levels')],
  ],
  ['empty body', raw(''), [missing(['body'], null)]],
  ['JSON null body', raw('null'), [missing(['body'], null)]],
  ['JSON array body', raw(`[${note}]`), [notAnObject([{ title: 'x', content: 'y' }])]],
  ['JSON string body', raw('"a note"'), [notAnObject('a note')]],
  ['JSON number body', raw('42'), [notAnObject(42)]],
  ['text/plain body', raw(note, 'text/plain'), [notAnObject(note)]],
  ['form-encoded body', raw(form, 'application/x-www-form-urlencoded'), [notAnObject(form)]],
  ['no Content-Type header, JSON body', raw(text, null), [notAnObject(text)]],
  [
    'U+0000 in the title and the content',
    raw(nul),
    [nulCharacter('title', 'a\u0000b'), nulCharacter('content', '\u0000')],
  ],
  [
    'half of a surrogate pair, which would be stored as U+FFFD',
    raw('{"title":"\\ud83d","content":"x"}'),
    [valueError('title', 'String should not contain unpaired surrogates', '\ud83d')],
  ],
  [
    'a title both too long and holding U+0000 (one entry, the length, as Pydantic checks it first)',
    json({ title: `${a101}\u0000`, content: 'x' }),
    [tooLong('title', `${a101}\u0000`)],
  ],
];

/** What an update refuses: the request, and the entries of the answer. */
export const invalidUpdates: [string, Options, unknown[]][] = [
  ['invalid JSON', raw('{bad'), [jsonInvalid(1, badJson)]],
  ['no body', raw(''), [missing(['body'], null)]],
  ['title is a number', raw('{"title":5}'), [notAString('title', 5)]],
  ['content is an object', raw('{"content":{"a":1}}'), [notAString('content', { a: 1 })]],
  // FastAPI answers 500 here (NoteUpdate has no limit, the column refuses): the rule is create's.
  ['title of 101 chars', json({ title: a101 }), [tooLong('title', a101)]],
  ['JSON array body', raw('[]'), [notAnObject([])]],
  ['text/plain body', raw('{"title":"x"}', 'text/plain'), [notAnObject('{"title":"x"}')]],
  ['U+0000 in the content', raw('{"content":"\\u0000"}'), [nulCharacter('content', '\u0000')]],
];
