import type * as yup from 'yup';

/**
 * Checks compiled from the yup schemas that validate path parameters and bodies, for the requests
 * that pass: a compiled check reads the schema's own description (types, what may be missing or
 * null, each test's name and parameters) and says, without yup's machinery, that a value passes.
 * Whenever it cannot be sure it says nothing, and yup, which stays the only definition of what is
 * valid, decides and words the failure. A check compiled here is never looser than its schema:
 * for each test it knows a condition under which yup's test passes too, nothing more.
 */

/** A test of the services' own: its predicate, the one the yup schema runs too. */
type Predicate = (value: unknown) => boolean;
const predicates = new Map<string, Predicate>();

/**
 * A yup test of the services' own, named so that a compiled check can run the same predicate.
 * `schema.test(ownTest('no_nul', message, predicate))`.
 */
export function ownTest<T>(
  name: string,
  message: string,
  predicate: (value: T) => boolean,
): yup.TestConfig<T> {
  const known = predicates.get(name);
  if (known && known !== predicate) throw new Error(`Two tests are named ${name}`);
  predicates.set(name, predicate as Predicate);
  return { name, message, test: predicate };
}

/**
 * A path parameter schema whose text is turned into its value by `parse` (the schema's only
 * transform), so that a compiled check parses it the same way.
 */
export function parsedBy<S extends yup.Schema>(schema: S, parse: (raw: string) => unknown): S {
  return schema.transform((_: unknown, raw: string) => parse(raw)).meta({ parse }) as S;
}

/**
 * What yup's own tests, by name, certainly accept: a sufficient condition for each, given their
 * parameters.
 */
const BUILT_IN: Record<string, (value: unknown, params: Record<string, unknown>) => boolean> = {
  // A string's `max` may count UTF-16 units (yup's) or code points (maxChars): a length within
  // the bound in UTF-16 units is within it either way.
  max: (value, { max }) =>
    (typeof value === 'string' ? value.length : (value as number)) <= (max as number),
  min: (value, { min }) =>
    (typeof value === 'string' ? value.length : (value as number)) >= (min as number),
  integer: (value) => Number.isInteger(value),
  required: (value) =>
    value !== undefined && value !== null && (typeof value !== 'string' || value.length > 0),
};

type FieldCheck = (value: unknown) => { ok: true; value: unknown } | undefined;

function fieldCheck(
  description: yup.SchemaDescription & { meta?: { parse?: (raw: string) => unknown } },
  parse: boolean,
): FieldCheck | undefined {
  const { type, optional, nullable, tests, meta, oneOf, notOneOf } = description;
  if ((type !== 'string' && type !== 'number') || oneOf.length > 0 || notOneOf.length > 0)
    return undefined;
  const checks = tests.map(({ name, params }) => {
    const own = name && predicates.get(name);
    if (own) return own;
    const builtIn = name && BUILT_IN[name];
    return builtIn ? (value: unknown) => builtIn(value, params ?? {}) : undefined;
  });
  if (checks.some((check) => check === undefined)) return undefined;
  const transform = parse ? meta?.parse : undefined;
  return (raw) => {
    const value = transform && typeof raw === 'string' ? transform(raw) : raw;
    if (value === undefined) return optional ? { ok: true, value } : undefined;
    if (value === null) return nullable ? { ok: true, value } : undefined;
    if (typeof value !== type || (type === 'number' && Number.isNaN(value))) return undefined;
    return checks.every((check) => check!(value)) ? { ok: true, value } : undefined;
  };
}

/**
 * The compiled check of an object schema: the value yup would give for `input` when it certainly
 * passes, else undefined (ask yup). `parse`: path parameters, read by their fields' `parsedBy`;
 * bodies are validated strictly, as they came. Undefined when the schema uses anything the
 * compiler does not know: then every value goes to yup.
 */
export function compileCheck(
  schema: yup.AnyObjectSchema,
  { parse }: { parse: boolean },
): ((input: unknown) => object | undefined) | undefined {
  const description = schema.describe() as yup.SchemaObjectDescription;
  if (description.tests.length > 0) return undefined;
  const fields = Object.entries(description.fields).map(
    ([name, field]) => [name, fieldCheck(field as yup.SchemaDescription, parse)] as const,
  );
  if (fields.some(([, check]) => check === undefined)) return undefined;
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
    const output: Record<string, unknown> = parse ? {} : (input as Record<string, unknown>);
    for (const [name, check] of fields) {
      const result = check!((input as Record<string, unknown>)[name]);
      if (!result) return undefined;
      if (parse) output[name] = result.value;
    }
    return output;
  };
}
