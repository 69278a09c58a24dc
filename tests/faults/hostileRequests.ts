import fc from 'fast-check';
import type { OutgoingHttpHeaders } from 'node:http';

/**
 * fast-check arbitraries for hostile HTTP requests: bodies, content types, path ids and
 * headers chosen to break parsers, validators, the database driver and session lookups.
 */

export type Service = 'notes8080' | 'notes8000' | 'auth';

export interface HostileRequest {
  method: string;
  path: string;
  headers: OutgoingHttpHeaders;
  body?: Buffer;
  /** Replace the `token` cookie with a freshly issued valid session before sending. */
  withValidSession: boolean;
}

const POLLUTING = ['__proto__', 'constructor', 'prototype'];

/** Strings that have broken parsers and databases before. */
export const nastyStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\udc00y',
  '\ud83d',
  '😀'.repeat(101),
  '😀'.repeat(200),
  '𝟙𝟚𝟛',
  '\u202e\u2066',
  '\ufeff',
  '\uffff\ufffe',
  'e\u0301'.repeat(60),
  '\r\n\t\u000b\u000c',
  '\\',
  '"',
  "'; DROP TABLE notes; --",
  '%00',
  '${7*7}',
  '{{constructor.constructor("return process")()}}',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'a'.repeat(100),
  'a'.repeat(101),
  'a'.repeat(200),
  'a'.repeat(201),
  'ア'.repeat(201),
  'x'.repeat(70_000),
];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...nastyStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 120 }) },
);

/** JSON number texts that JavaScript cannot hold exactly (or at all). */
const numberTexts = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0.0',
  '123456789012345678901234567890',
  '9007199254740993',
  '2147483648',
  '1.5',
  '1E2',
];

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt().map((value) => Number(value)),
);

const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...POLLUTING)),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

/** Objects with the services' own field names holding hostile values. */
const fieldNames = [
  'title',
  'body',
  'content',
  'email',
  'password',
  'id',
  'created_at',
  'updated_at',
];
const nastyRecord = fc.dictionary(
  fc.oneof(fc.constantFrom(...fieldNames), fc.constantFrom(...POLLUTING)),
  nastyValue,
  {
    maxKeys: 5,
  },
);

const validLike = fc.record({
  title: nastyString,
  body: fc.option(nastyString),
  content: fc.option(nastyString),
  email: fc.constantFrom(
    'user@example.com',
    'admin@example.com',
    'USER@EXAMPLE.COM',
    'nobody@example.com',
  ),
  password: fc.oneof(fc.constantFrom('user-password', 'admin-password'), nastyString),
});

/** Bodies whose text JSON.stringify cannot produce: duplicates, huge numbers, pollution. */
const craftedJsonTexts = [
  '{"title":"a","title":5}',
  '{"title":"a","body":"b","body":{"x":1}}',
  '{"email":"user@example.com","password":"x","password":"user-password"}',
  '{"__proto__":{"polluted":"yes"},"title":"t","body":"b","content":"c"}',
  '{"constructor":{"prototype":{"polluted":"yes"}},"title":"t","content":"c"}',
  '{"title":{"__proto__":{"polluted":"yes"}},' +
    '"content":{"constructor":{"prototype":{"polluted":"yes"}}}}',
  '{"email":{"__proto__":{"polluted":"yes"}},"password":"x"}',
  '{"email":"user@example.com","password":"user-password",' +
    '"__proto__":{"role":"admin","polluted":"yes"}}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"title":"\\u0000","content":"\\ud800"}',
  '{"title":"\\udfff\\ud800","body":"\\u0000"}',
  '{"title":"t","content":"c"} trailing',
  '{"title":"t",}',
  "{'title':'t'}",
  '{"title":"t"',
  '{"title":"t\u0001"}',
  '"just a string"',
  'null',
  'true',
  '0',
  '[]',
  '{}',
  '\ufeff{"title":"bom","content":"c","body":"b"}',
  'NaN',
  '{"title":Infinity}',
];

const craftedJson = fc.oneof(
  fc.constantFrom(...craftedJsonTexts),
  fc
    .tuple(
      fc.constantFrom('title', 'body', 'content', 'email', 'password'),
      fc.constantFrom(...numberTexts),
    )
    .map(([key, number]) => `{"${key}":${number},"title":"t","content":"c"}`),
);

/** Nesting deep enough to overflow a recursive parser, validator or serializer. */
function nested(depth: number, kind: 'array' | 'object' | 'field'): string {
  if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  return `{"title":${nested(depth, 'array')},"content":"c","email":"e","password":"p"}`;
}
const NESTING_KINDS = ['array', 'object', 'field'] as const;
const deepNesting = fc
  .tuple(fc.constantFrom(10, 1_000, 10_000, 50_000, 300_000), fc.constantFrom(...NESTING_KINDS))
  .map(([depth, kind]) => nested(depth, kind));

/** Bytes that are not valid UTF-8, or are UTF-8 in a form decoders must refuse. */
const invalidUtf8Bodies = [
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.from('{"title":"\xc0\xaf","content":"c"}', 'latin1'),
  Buffer.from('{"title":"\xed\xa0\x80","content":"c","body":"b"}', 'latin1'),
  Buffer.from('{"title":"\xf4\x90\x80\x80"}', 'latin1'),
  Buffer.from([0x7b, 0x22, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
  Buffer.from('{"title":"t"}', 'utf16le'),
];
const invalidUtf8 = fc.constantFrom(...invalidUtf8Bodies);

const bodyArb: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
  { weight: 4, arbitrary: validLike.map((value) => Buffer.from(JSON.stringify(value))) },
  { weight: 3, arbitrary: nastyRecord.map((value) => Buffer.from(JSON.stringify(value))) },
  {
    weight: 2,
    arbitrary: nastyValue.map((value) => Buffer.from(JSON.stringify(value) ?? 'undefined')),
  },
  { weight: 3, arbitrary: craftedJson.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: deepNesting.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: invalidUtf8 },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((text) => Buffer.from(text)),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  // Just over every body limit (16 KiB for login, 1 MiB for notes).
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(16 * 1024 + 1, 1024 * 1024 + 1)
      .map((size) => Buffer.from(`{"title":"${'a'.repeat(size)}"}`)),
  },
);

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset="utf-8"',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/json; charset=bogus-charset',
  'application/json; charset=',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'application/json, text/plain',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  'application/xml',
  '*/*',
  'json',
  ';;;',
  'application/json; charset=utf-8; charset=latin1',
];

/** Path ids a client might send instead of a positive integer; already percent-encoded. */
export const nastyIds = [
  '1',
  '2',
  '0',
  '-1',
  '-0',
  '+1',
  '1.0',
  '1.5',
  '1e3',
  '0x10',
  '1_000',
  '01',
  ' 1'.replace(' ', '%20'),
  '2147483647',
  '2147483648',
  '9007199254740993',
  '99999999999999999999999999999999',
  '9'.repeat(4300),
  '9'.repeat(5000),
  'NaN',
  'Infinity',
  'null',
  'undefined',
  'true',
  '__proto__',
  'constructor',
  encodeURIComponent('٣'),
  encodeURIComponent('１２'),
  encodeURIComponent('¹'),
  encodeURIComponent('𝟙'),
  '%2F',
  '1%2F2',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '%00',
  '1%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '1%0A',
  '%20',
];

const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...nastyIds) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map((value) => encodeURIComponent(String(value))) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent) },
);

const nastyCookies = [
  'token=',
  'token',
  '=',
  ';;;',
  '=token',
  'token=__proto__',
  'token=constructor',
  'token=toString',
  'token=hasOwnProperty',
  'token=valueOf',
  'token="unterminated',
  'token="quoted"',
  'token=%ZZ',
  'token=%00',
  'token=\xff\xfe',
  'token=a; token=b',
  'token=VALID; token=forged',
  'token=forged; token=VALID',
  `token=${'a'.repeat(4096)}`,
  `token=${'a'.repeat(15_000)}`,
  `token=${'a'.repeat(70_000)}`,
  'token=00000000-0000-0000-0000-000000000000',
  Array.from({ length: 2000 }, (_, i) => `c${i}=${i}`).join('; '),
];

const cookieArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant('token=VALID') },
  { weight: 3, arbitrary: fc.constantFrom(...nastyCookies) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 2000 })
      .map((count) => Array.from({ length: count }, (_, i) => `c${i}=${i}`).join('; ')),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'binary-ascii', maxLength: 100 })
      .map((text) => text.replace(/[^\t\x20-\x7e]/g, '')),
  },
);

const originArb = fc.constantFrom(
  undefined,
  undefined,
  undefined,
  'null',
  'http://evil.example',
  'not a url',
  'http://127.0.0.1',
);

const encodingArb = fc.constantFrom(
  undefined,
  undefined,
  undefined,
  undefined,
  'gzip',
  'deflate',
  'br',
  'identity',
  'bogus',
);

function routes(service: Service): fc.Arbitrary<string> {
  const query = fc.constantFrom(
    '',
    '',
    '',
    '?a=1',
    '?__proto__[polluted]=yes',
    '?constructor[prototype][polluted]=yes',
    '?%zz',
    '?x=' + 'y'.repeat(5000),
  );
  const notes = fc.oneof(
    fc.constant('/notes'),
    idArb.map((id) => `/notes/${id}`),
    idArb.map((id) => `/notes/${id}/extra`),
    fc.constantFrom(
      '/notes/',
      '//notes',
      '/NOTES',
      '/notes//1',
      '/notes/1/',
      '/',
      '/unknown',
      '/%zz',
      '/notes%2F1',
    ),
  );
  const paths: Record<Service, fc.Arbitrary<string>> = {
    notes8080: notes,
    notes8000: fc.oneof(
      notes,
      fc.constantFrom(
        '/health',
        '/docs',
        '/openapi.json',
        '/redoc',
        '/docs/swagger-ui.css',
        '/docs/..%2F..%2Fpackage.json',
        '/docs/%zz',
        '/docs/nope.js',
      ),
    ),
    auth: fc.constantFrom(
      '/api/login',
      '/api/login',
      '/api/me',
      '/api/logout',
      '/api',
      '/api/',
      '/api/unknown',
      '/api/%zz',
      '/login',
      '/dashboard',
      '/',
      '/assets/..%2F..%2Fpackage.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/%zz',
      '/assets/nope.js',
      '/%zz',
      '/unknown',
    ),
  };
  return fc.tuple(paths[service], query).map(([path, search]) => path + search);
}

export function hostileRequest(service: Service): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method: fc.constantFrom(
        'GET',
        'POST',
        'PUT',
        'DELETE',
        'PATCH',
        'OPTIONS',
        'HEAD',
        'POST',
        'PUT',
      ),
      path: routes(service),
      body: bodyArb,
      contentType: fc.option(fc.constantFrom(...contentTypes), { freq: 4 }),
      encoding: encodingArb,
      cookie: cookieArb,
      origin: originArb,
    })
    .map(({ method, path, body, contentType, encoding, cookie, origin }) => {
      const headers: OutgoingHttpHeaders = {};
      if (contentType !== null) headers['content-type'] = contentType;
      if (encoding) headers['content-encoding'] = encoding;
      if (cookie !== undefined) headers.cookie = cookie;
      if (origin) headers.origin = origin;
      return {
        method,
        path,
        headers,
        body: method === 'HEAD' ? undefined : body,
        withValidSession: cookie?.includes('VALID') ?? false,
      };
    });
}

/**
 * The known-nasty inputs, each sent once to the endpoints that read them, before the random
 * runs: every catalogued body to the routes with a body, every catalogued id to the routes
 * with an id, every catalogued cookie to the routes that read the session.
 */
export function catalogue(service: Service): HostileRequest[] {
  const json = { 'content-type': 'application/json' };
  const bodies = [
    ...craftedJsonTexts.map((text) => Buffer.from(text)),
    ...[10_000, 300_000].flatMap((depth) =>
      NESTING_KINDS.map((kind) => Buffer.from(nested(depth, kind))),
    ),
    ...invalidUtf8Bodies,
    ...nastyStrings.map((text) =>
      Buffer.from(
        JSON.stringify({ title: text, body: text, content: text, email: text, password: text }),
      ),
    ),
  ];
  const request = (
    method: string,
    path: string,
    headers: OutgoingHttpHeaders = {},
    body?: Buffer,
  ): HostileRequest => ({
    method,
    path,
    headers,
    body,
    withValidSession: String(headers.cookie ?? '').includes('VALID'),
  });
  if (service === 'auth') {
    return [
      ...bodies.map((body) => request('POST', '/api/login', json, body)),
      ...nastyCookies.flatMap((cookie) =>
        ['/api/me', '/dashboard', '/api/logout'].map((path) =>
          request(path === '/api/logout' ? 'POST' : 'GET', path, { cookie }),
        ),
      ),
    ];
  }
  return [
    ...bodies.flatMap((body) => [
      request('POST', '/notes', json, body),
      request('PUT', '/notes/1', json, body),
    ]),
    ...nastyIds.flatMap((id) => [
      request('GET', `/notes/${id}`),
      request('PUT', `/notes/${id}`, json, Buffer.from('{"title":"t","body":"b","content":"c"}')),
      request('DELETE', `/notes/${id}`),
    ]),
  ];
}
