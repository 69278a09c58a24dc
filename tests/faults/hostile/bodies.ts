import fc from 'fast-check';

// fast-check arbitraries for hostile request bodies and content types, chosen to break parsers,
// validators and the database driver.

const POLLUTING = ['__proto__', 'constructor', 'prototype'];

/** Strings that have broken parsers and databases before. */
export const nastyStrings = [
  ['', ' ', '\u0000', 'a\u0000b'],
  // Lone surrogates, and characters outside the BMP.
  ['\ud800', '\udfff', 'x\udc00y', '\ud83d', '😀'.repeat(101), '😀'.repeat(200), '𝟙𝟚𝟛'],
  // Direction overrides, a BOM, noncharacters, combining marks, control characters.
  ['\u202e\u2066', '\ufeff', '\uffff\ufffe', 'e\u0301'.repeat(60), '\r\n\t\u000b\u000c'],
  ['\\', '"', "'; DROP TABLE notes; --", '%00', '${7*7}'],
  ['{{constructor.constructor("return process")()}}'],
  ['__proto__', 'constructor', 'toString', 'hasOwnProperty'],
  // Around the 100 and 200 character limits, and far past every one.
  ['a'.repeat(100), 'a'.repeat(101), 'a'.repeat(200), 'a'.repeat(201), 'ア'.repeat(201)],
  ['x'.repeat(70_000)],
].flat();

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
].concat(['9007199254740993', '2147483648', '1.5', '1E2']);

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
const fieldNames = 'title body content email password id created_at updated_at'.split(' ');
const nastyRecord = fc.dictionary(
  fc.oneof(fc.constantFrom(...fieldNames), fc.constantFrom(...POLLUTING)),
  nastyValue,
  { maxKeys: 5 },
);

const validLike = fc.record({
  title: nastyString,
  body: fc.option(nastyString),
  content: fc.option(nastyString),
  email: fc.constantFrom(
    ...['user@example.com', 'admin@example.com', 'USER@EXAMPLE.COM', 'nobody@example.com'],
  ),
  password: fc.oneof(fc.constantFrom('user-password', 'admin-password'), nastyString),
});

/** Bodies whose text JSON.stringify cannot produce: duplicates, huge numbers, pollution. */
export const craftedJsonTexts = [
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
  // Not JSON, or not an object.
  ...['{"title":"t","content":"c"} trailing', '{"title":"t",}', "{'title':'t'}", '{"title":"t"'],
  ...['{"title":"t\u0001"}', '"just a string"', 'null', 'true', '0', '[]', '{}'],
  ...['\ufeff{"title":"bom","content":"c","body":"b"}', 'NaN', '{"title":Infinity}'],
];

const craftedJson = fc.oneof(
  fc.constantFrom(...craftedJsonTexts),
  fc
    .tuple(fc.constantFrom(...fieldNames.slice(0, 5)), fc.constantFrom(...numberTexts))
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
export const invalidUtf8Bodies = [
  Buffer.from([0xff, 0xfe, 0xfd]),
  ...[
    '{"title":"\xc0\xaf","content":"c"}',
    '{"title":"\xed\xa0\x80","content":"c","body":"b"}',
    '{"title":"\xf4\x90\x80\x80"}',
  ].map((text) => Buffer.from(text, 'latin1')),
  Buffer.from([0x7b, 0x22, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
  Buffer.from('{"title":"t"}', 'utf16le'),
];

const text = (arbitrary: fc.Arbitrary<string>) => arbitrary.map((value) => Buffer.from(value));
const json = (arbitrary: fc.Arbitrary<unknown>) =>
  arbitrary.map((value) => Buffer.from(JSON.stringify(value) ?? 'undefined'));

export const bodyArb: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
  { weight: 4, arbitrary: json(validLike) },
  { weight: 3, arbitrary: json(nastyRecord) },
  { weight: 2, arbitrary: json(nastyValue) },
  { weight: 3, arbitrary: text(craftedJson) },
  { weight: 1, arbitrary: text(deepNesting) },
  { weight: 1, arbitrary: fc.constantFrom(...invalidUtf8Bodies) },
  { weight: 1, arbitrary: text(fc.string({ unit: 'binary', maxLength: 200 })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  // Just over every body limit (16 KiB for login, 1 MiB for notes).
  {
    weight: 1,
    arbitrary: text(
      fc.constantFrom(16 * 1024 + 1, 2 ** 20 + 1).map((size) => `{"title":"${'a'.repeat(size)}"}`),
    ),
  },
);

export const contentTypes = [
  ...['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8'],
  ...['application/json;charset="utf-8"', 'application/json; charset=utf-16'],
  ...['application/json; charset=latin1', 'application/json; charset=iso-8859-1'],
  ...['application/json; charset=bogus-charset', 'application/json; charset='],
  ...['APPLICATION/JSON', 'application/vnd.api+json', 'application/merge-patch+json'],
  ...['application/json, text/plain', 'text/json', 'text/plain', 'text/plain; charset=utf-8'],
  ...['text/html', 'application/x-www-form-urlencoded', 'multipart/form-data'],
  ...['multipart/form-data; boundary=xyz', 'application/octet-stream', 'application/xml'],
  ...['*/*', 'json', ';;;', 'application/json; charset=utf-8; charset=latin1'],
];

/** JSON nested far past the services' depth limit, as arrays, objects and fields. */
export const deeplyNestedBodies = [10_000, 300_000].flatMap((depth) =>
  NESTING_KINDS.map((kind) => Buffer.from(nested(depth, kind))),
);
