import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as yup from 'yup';
import { noteRoutes as notes8000Routes } from '../server/notes8000/routes.js';
import { noteRoutes as notes8080Routes } from '../server/notes8080/routes.js';
import { compileCheck } from '../server/shared/compiledCheck.js';
import { loadConfig } from '../server/shared/config.js';
import type { Database } from '../server/shared/database.js';
import type { Route } from '../server/shared/route.js';

// The compiled checks say "valid" only where yup says so too, with the same value: yup stays the
// definition of what is valid. Run on the routes' own schemas with inputs built to sit on every
// edge they draw (lengths, code points, NUL, lone surrogates, numbers spelled every way).

/** The notes services' routes: only their schemas are used, never their store. */
const unusedStore = {} as Database;
const routes: Route[] = [
  ...notes8080Routes(unusedStore, loadConfig({}).notes),
  ...notes8000Routes(unusedStore, loadConfig({}).notes),
];

const edgyText = fc.oneof(
  fc.string({ maxLength: 210 }),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.string({
    unit: fc.constantFrom('a', '\u0000', '\ud800', '\udc00', '😀', 'é'),
    maxLength: 205,
  }),
  fc.constantFrom(
    '',
    'x'.repeat(100),
    'x'.repeat(101),
    'x'.repeat(200),
    'x'.repeat(201),
    '😀'.repeat(100),
    '😀'.repeat(101),
    '😀'.repeat(200),
  ),
);
const bodyValue = fc.oneof(
  fc.record(
    {
      title: fc.oneof(edgyText, fc.constant(null), fc.integer()),
      body: fc.oneof(edgyText, fc.constant(null), fc.boolean()),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      title: fc.oneof(edgyText, fc.constant(null)),
      content: fc.oneof(edgyText, fc.constant(null), fc.integer()),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const pathText = fc.oneof(
  fc.string({ unit: fc.constantFrom('0', '1', '9', '_', '.', '-', '+', ' ', 'a'), maxLength: 14 }),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.constantFrom(
    '0',
    '1',
    '2147483647',
    '2147483648',
    '9007199254740993',
    '1.0',
    '1.5',
    ' 7 ',
    '1_000',
    '01',
    'x'.repeat(5000),
  ),
);

/** Every value the compiled check passes, yup passes as well, giving the same value. */
function agrees(schema: yup.AnyObjectSchema, input: unknown, parse: boolean): void {
  const checked = compileCheck(schema, { parse })?.(input);
  if (!checked) return;
  expect(
    () => schema.validateSync(input, { strict: !parse, abortEarly: false }),
    JSON.stringify(input),
  ).not.toThrow();
  expect(checked).toEqual(schema.validateSync(input, { strict: !parse }));
}

describe('compiled checks', () => {
  it('are compiled for every body and path schema of the notes services', () => {
    for (const route of routes) {
      if (route.params)
        expect(
          compileCheck(route.params, { parse: true }),
          `${route.method} ${route.path} params`,
        ).toBeDefined();
      if (route.body)
        expect(
          compileCheck(route.body, { parse: false }),
          `${route.method} ${route.path} body`,
        ).toBeDefined();
    }
  });

  it.each(
    routes
      .filter((route) => route.body)
      .map((route) => [`${route.method} ${route.path}`, route] as const),
  )('pass no body yup refuses: %s', (_, route) => {
    fc.assert(
      fc.property(bodyValue, (input) => agrees(route.body, input, false)),
      { numRuns: 3_000 },
    );
  });

  it.each(
    routes
      .filter((route) => route.params)
      .map((route) => [`${route.method} ${route.path}`, route] as const),
  )('pass no path yup refuses: %s', (_, route) => {
    const name = Object.keys((route.params as yup.AnyObjectSchema).fields)[0]!;
    fc.assert(
      fc.property(pathText, (raw) => agrees(route.params, { [name]: raw }, true)),
      { numRuns: 3_000 },
    );
  });

  it('pass what is plainly valid, so that valid requests skip yup', () => {
    const [create8080] = routes.filter((route) => route.method === 'post');
    expect(
      compileCheck(create8080!.body, { parse: false })!({ title: 'a note', body: 'text' }),
    ).toEqual({ title: 'a note', body: 'text' });
    const read8080 = routes.find(
      (route) => route.method === 'get' && route.path === '/notes/{id}',
    )!;
    expect(compileCheck(read8080.params, { parse: true })!({ id: '42' })).toEqual({ id: 42 });
  });

  it('leave a schema with a test they do not know to yup', () => {
    const unknown = yup.object({ name: yup.string().test('custom', 'no', () => true) });
    expect(compileCheck(unknown, { parse: false })).toBeUndefined();
  });
});
