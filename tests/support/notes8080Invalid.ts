import { BODY_LIMIT, raw, type Options } from './notesServices.js';

// What the 8080 notes service refuses, checked on every endpoint that reads it.

const json = (value: unknown): Options => ({ json: value });
const notJson = (why: string, at: number) =>
  `Request body is not valid JSON: ${why} (at character ${at})`;
const notAnObject = (what: string) => `Request body must be a JSON object, not ${what}`;
const noBody = 'Request body is required: send a JSON object with a "title"';
const notJsonType = (got: string) =>
  `Request body must be sent with Content-Type: application/json (got ${got})`;
const [notString, tooLong] = ['title must be a string', 'title must be at most 200 characters'];
const oversized = json({ title: 'big', body: 'x'.repeat(BODY_LIMIT) });
const nul = (field: string) => `${field} must not contain the NUL character`;
const unicode = (field: string) => `${field} must be well-formed Unicode`;
const FORM = 'application/x-www-form-urlencoded';
const deep = raw(`{"title":"x","body":${'['.repeat(64)}${']'.repeat(64)}}`);
const doubleQuotes = 'Expecting property name enclosed in double quotes';

/** Every rejected body, for create and update alike: the exact `error`, its status unless 400. */
export const invalidBodies: [string, Options, string, number?][] = [
  ['a missing title', json({ body: 'x' }), 'title is required'],
  ['an empty title', json({ title: '' }), 'title must not be empty'],
  ['a null title', json({ title: null }), notString],
  ['a numeric title', json({ title: 123 }), notString],
  ['an array title', json({ title: ['a'] }), notString],
  ['a title of 201 characters', json({ title: 'a'.repeat(201) }), tooLong],
  ['a title of 201 emoji', json({ title: '😀'.repeat(201) }), tooLong],
  ['a title with NUL', json({ title: 'a\u0000b' }), nul('title')],
  // JSON text can escape half of a surrogate pair, which PostgreSQL would store as U+FFFD.
  ['a title holding a lone surrogate', raw('{"title":"\\ud83d"}'), unicode('title')],
  ['a body holding a lone surrogate', raw('{"title":"t","body":"x\\udc00"}'), unicode('body')],
  ['a numeric body', json({ title: 't', body: 5 }), 'body must be a string'],
  ['a body with NUL', json({ title: 't', body: '\u0000' }), nul('body')],
  ['two failing fields', json({ body: false }), 'title is required; body must be a string'],
  ['an empty object', json({}), 'title is required'],
  ['a JSON array', json([{ title: 't' }]), notAnObject('an array')],
  ['a JSON string', json('title'), notAnObject('a string')],
  ['a JSON number', json(42), notAnObject('a number')],
  ['a JSON boolean', json(true), notAnObject('a boolean')],
  ['JSON null', json(null), notAnObject('null')],
  ['truncated JSON', raw('{"title": "x", "body": '), notJson('Expecting value', 23)],
  ['JSON followed by garbage', raw('{"title":"x"} garbage'), notJson('Extra data', 14)],
  ['JSON nested 65 levels deep', deep, notJson('Nesting deeper than 64 levels', 83)],
  ['single-quoted JSON', raw("{'title': 'x'}"), notJson(doubleQuotes, 1)],
  ['an empty JSON body', raw(''), noBody],
  ['no body at all', {}, noBody],
  ['a text/plain body', raw('{"title":"x"}', 'text/plain'), notJsonType('text/plain'), 415],
  ['a form-encoded body', raw('title=x', FORM), notJsonType(FORM), 415],
  ['a JSON body without a content type', raw('{"title":"x"}', null), notJsonType('none'), 415],
  ['a body over the size limit', oversized, 'Request body too large', 413],
];

/** Path ids that cannot name a note: not a positive decimal integer within int4. */
export const invalidIds =
  'abc 1.5 -1 0 9007199254740992 99999999999999999999 true 1e3 0x10 %20 %E0'.split(' ');
