import { BODY_LIMIT, jsonText, type Options } from './notes8080.js';

// What the 8080 notes service refuses, checked on every endpoint that reads it.

/** Every rejected body, for create and update alike: status and the exact `error`. */
export const invalidBodies: [string, Options, number, string][] = [
  ['a missing title', { json: { body: 'x' } }, 400, 'title is required'],
  ['an empty title', { json: { title: '' } }, 400, 'title must not be empty'],
  ['a null title', { json: { title: null } }, 400, 'title must be a string'],
  ['a numeric title', { json: { title: 123 } }, 400, 'title must be a string'],
  ['an array title', { json: { title: ['a'] } }, 400, 'title must be a string'],
  [
    'a title of 201 characters',
    { json: { title: 'a'.repeat(201) } },
    400,
    'title must be at most 200 characters',
  ],
  [
    'a title of 201 emoji',
    { json: { title: '😀'.repeat(201) } },
    400,
    'title must be at most 200 characters',
  ],
  [
    'a title with NUL',
    { json: { title: 'a\u0000b' } },
    400,
    'title must not contain the NUL character',
  ],
  // JSON text can escape half of a surrogate pair, which PostgreSQL would store as U+FFFD.
  [
    'a title holding a lone surrogate',
    jsonText('{"title":"\\ud83d"}'),
    400,
    'title must be well-formed Unicode',
  ],
  [
    'a body holding a lone surrogate',
    jsonText('{"title":"t","body":"x\\udc00"}'),
    400,
    'body must be well-formed Unicode',
  ],
  ['a numeric body', { json: { title: 't', body: 5 } }, 400, 'body must be a string'],
  [
    'a body with NUL',
    { json: { title: 't', body: '\u0000' } },
    400,
    'body must not contain the NUL character',
  ],
  [
    'two failing fields',
    { json: { body: false } },
    400,
    'title is required; body must be a string',
  ],
  ['an empty object', { json: {} }, 400, 'title is required'],
  [
    'a JSON array',
    { json: [{ title: 't' }] },
    400,
    'Request body must be a JSON object, not an array',
  ],
  ['a JSON string', { json: 'title' }, 400, 'Request body must be a JSON object, not a string'],
  ['a JSON number', { json: 42 }, 400, 'Request body must be a JSON object, not a number'],
  ['a JSON boolean', { json: true }, 400, 'Request body must be a JSON object, not a boolean'],
  ['JSON null', { json: null }, 400, 'Request body must be a JSON object, not null'],
  [
    'truncated JSON',
    jsonText('{"title": "x", "body": '),
    400,
    'Request body is not valid JSON: Expecting value (at character 23)',
  ],
  [
    'JSON followed by garbage',
    jsonText('{"title":"x"} garbage'),
    400,
    'Request body is not valid JSON: Extra data (at character 14)',
  ],
  [
    'JSON nested 65 levels deep',
    jsonText(`{"title":"x","body":${'['.repeat(64)}${']'.repeat(64)}}`),
    400,
    'Request body is not valid JSON: Nesting deeper than 64 levels (at character 83)',
  ],
  [
    'single-quoted JSON',
    jsonText("{'title': 'x'}"),
    400,
    'Request body is not valid JSON: Expecting property ' +
      'name enclosed in double quotes (at character 1)',
  ],
  [
    'an empty JSON body',
    jsonText(''),
    400,
    'Request body is required: send a JSON object with a "title"',
  ],
  ['no body at all', {}, 400, 'Request body is required: send a JSON object with a "title"'],
  [
    'a text/plain body',
    jsonText('{"title":"x"}', 'text/plain'),
    415,
    'Request body must be sent with Content-Type: application/json (got text/plain)',
  ],
  [
    'a form-encoded body',
    jsonText('title=x', 'application/x-www-form-urlencoded'),
    415,
    'Request body must be sent with Content-Type: ' +
      'application/json (got application/x-www-form-urlencoded)',
  ],
  [
    'a JSON body without a content type',
    { body: '{"title":"x"}' },
    415,
    'Request body must be sent with Content-Type: application/json (got none)',
  ],
  [
    'a body over the size limit',
    { json: { title: 'big', body: 'x'.repeat(BODY_LIMIT) } },
    413,
    'Request body too large',
  ],
];

/** Path ids that cannot name a note: not a positive decimal integer within int4. */
export const invalidIds = [
  'abc',
  '1.5',
  '-1',
  '0',
  '9007199254740992',
  '99999999999999999999',
  'true',
  '1e3',
  '0x10',
  '%20',
  '%E0',
];
