import * as yup from 'yup';
import type { MalformedJsonError } from '../http/errors.js';
import type { InvalidRequestError, JsonSchema } from '../http/route.js';

/**
 * How FastAPI with Pydantic v2 reads a request and words what is wrong with it: the error
 * entries of a 422 `{detail: [...]}`, where `input` is always what was received at `loc`.
 */
export interface ErrorEntry {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: ErrorContext;
}

/**
 * What the failed rule was given: every key an entry's `ctx` can have (the OpenAPI document lists
 * them).
 */
export interface ErrorContext {
  max_length?: number;
  ge?: number;
  le?: number;
  error?: string;
}

const MESSAGES = {
  fieldRequired: 'Field required',
  stringType: 'Input should be a valid string',
  stringTooLong: (max: number) => `String should have at most ${max} characters`,
  notAnObject: 'Input should be a valid dictionary or object to extract fields from',
  jsonInvalid: 'JSON decode error',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_parsing_size: 'Unable to parse input string as an integer, exceeded maximum size',
  valueError: (reason: string) => `Value error, ${reason}`,
  greaterThanEqual: (bound: number) => `Input should be greater than or equal to ${bound}`,
  lessThanEqual: (bound: number) => `Input should be less than or equal to ${bound}`,
};

/**
 * Rules of this service beyond Pydantic's, reported as a custom validator's ValueError would be.
 */
const SERVICE_RULES: Record<string, string> = {
  no_nul: 'String should not contain the NUL character (U+0000)',
  well_formed: 'String should not contain unpaired surrogates',
};

/** Pydantic gives up on integer strings longer than this. */
const MAX_INT_STRING_LENGTH = 4300;

/**
 * A path or query integer read as Pydantic (lax mode) reads a string: surrounding whitespace
 * ignored, an optional sign, and also `12.000` (zero decimals) or `1_000` (single underscores
 * between digits). Any size is an integer here; one that no note can have is the store's business.
 */
export const laxInteger = () =>
  yup
    .number()
    .transform((_value, raw) => (typeof raw === 'string' ? parseLaxInteger(raw) : raw))
    .test(
      'int_parsing_size',
      MESSAGES.int_parsing_size,
      (value) => value !== Number.POSITIVE_INFINITY,
    )
    .integer();

function parseLaxInteger(raw: string): number {
  const text = raw.trim();
  // Too long to parse at all: kept as a number so that the size rule, not the type, reports it.
  if (text.length > MAX_INT_STRING_LENGTH) return Number.POSITIVE_INFINITY;
  const digits = [text, text.replace(/\.0*$/, ''), withoutUnderscores(text)].find(
    (candidate) => candidate !== undefined && /^[+-]?[0-9]+$/.test(candidate),
  );
  return digits === undefined ? Number.NaN : Number(digits);
}

function withoutUnderscores(text: string): string | undefined {
  if (text.startsWith('_') || text.endsWith('_') || text.includes('__')) return undefined;
  return text.replaceAll('_', '');
}

export function malformedJsonEntry(error: MalformedJsonError): ErrorEntry {
  return {
    type: 'json_invalid',
    loc: ['body', error.position],
    msg: MESSAGES.jsonInvalid,
    input: {},
    ctx: { error: error.reason },
  };
}

/**
 * The entries of an integer parameter's failures (`location`: path or query), one per parameter,
 * as Pydantic words the first rule it stops at: not an integer, then a bound.
 */
function parameterEntries(
  location: 'path' | 'query',
  failed: yup.ValidationError | undefined,
): ErrorEntry[] {
  const names = [...new Set((failed?.inner ?? []).map((failure) => failure.path ?? ''))];
  return names.map((name): ErrorEntry => {
    const failures = failed!.inner.filter((failure) => failure.path === name);
    const input = failures[0]!.params?.originalValue;
    const loc = [location, name];
    const of = (type: string) => failures.find((failure) => failure.type === type);
    if (of('int_parsing_size'))
      return { type: 'int_parsing_size', loc, msg: MESSAGES.int_parsing_size, input };
    const low = of('min');
    const high = of('max');
    if (!of('typeError') && low)
      return {
        type: 'greater_than_equal',
        loc,
        msg: MESSAGES.greaterThanEqual(Number(low.params?.min)),
        input,
        ctx: { ge: Number(low.params?.min) },
      };
    if (!of('typeError') && high)
      return {
        type: 'less_than_equal',
        loc,
        msg: MESSAGES.lessThanEqual(Number(high.params?.max)),
        input,
        ctx: { le: Number(high.params?.max) },
      };
    return { type: 'int_parsing', loc, msg: MESSAGES.int_parsing, input };
  });
}

/**
 * The entries of a request that failed validation: the path's first, then the query's, then the
 * body's.
 */
export function validationEntries({ params, query, body }: InvalidRequestError): ErrorEntry[] {
  const entries = [...parameterEntries('path', params), ...parameterEntries('query', query)];
  if (!body) return entries;
  const { received, validation } = body;
  if (!validation) {
    // Not declared as JSON: FastAPI hands the raw text to the model, which is no object.
    const input = received.kind === 'other' ? received.raw : null;
    return [
      ...entries,
      { type: 'model_attributes_type', loc: ['body'], msg: MESSAGES.notAnObject, input },
    ];
  }
  const object = received.kind === 'json' ? received.value : null;
  // One entry per failing field, in the schema's order; where yup reports several failures for
  // one field, the one Pydantic would stop at wins (type before length before the NUL check).
  const byField = new Map<string, yup.ValidationError>();
  for (const failure of validation.inner.length > 0 ? validation.inner : [validation]) {
    const field = failure.path ?? '';
    const kept = byField.get(field);
    if (!kept || precedence(failure) < precedence(kept)) byField.set(field, failure);
  }
  return [
    ...entries,
    ...[...byField].map(([field, failure]) =>
      field === '' ? bodyEntry(failure) : fieldEntry(field, failure, object),
    ),
  ];
}

const PRECEDENCE = ['optionality', 'nullable', 'typeError', 'max'];

function precedence(failure: yup.ValidationError): number {
  const rank = PRECEDENCE.indexOf(failure.type ?? '');
  return rank === -1 ? PRECEDENCE.length : rank;
}

/** The body as a whole: absent or `null`, or a JSON value that is not an object. */
function bodyEntry(failure: yup.ValidationError): ErrorEntry {
  if (failure.type === 'typeError') {
    return {
      type: 'model_attributes_type',
      loc: ['body'],
      msg: MESSAGES.notAnObject,
      input: failure.value,
    };
  }
  return { type: 'missing', loc: ['body'], msg: MESSAGES.fieldRequired, input: null };
}

function fieldEntry(field: string, failure: yup.ValidationError, received: unknown): ErrorEntry {
  const loc = ['body', field];
  switch (failure.type) {
    case 'optionality':
      // A missing field has no value of its own: Pydantic shows the object it is missing from.
      return { type: 'missing', loc, msg: MESSAGES.fieldRequired, input: received };
    case 'nullable':
    case 'typeError':
      return { type: 'string_type', loc, msg: MESSAGES.stringType, input: failure.value };
    case 'max': {
      const max = Number(failure.params?.max);
      return {
        type: 'string_too_long',
        loc,
        msg: MESSAGES.stringTooLong(max),
        input: failure.value,
        ctx: { max_length: max },
      };
    }
    default: {
      // Pydantic's str accepts these, and PostgreSQL would then refuse them with a 500.
      const reason = SERVICE_RULES[failure.type ?? ''] ?? failure.message;
      return {
        type: 'value_error',
        loc,
        msg: MESSAGES.valueError(reason),
        input: failure.value,
        ctx: { error: reason },
      };
    }
  }
}

/** FastAPI's schema of a 422's body, its `ctx` holding what this service's entries give. */
export const HTTPValidationError: JsonSchema = {
  type: 'object',
  title: 'HTTPValidationError',
  properties: {
    detail: {
      type: 'array',
      title: 'Detail',
      items: {
        type: 'object',
        title: 'ValidationError',
        properties: {
          loc: {
            type: 'array',
            title: 'Location',
            items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          },
          msg: { type: 'string', title: 'Message' },
          type: { type: 'string', title: 'Error Type' },
          input: { title: 'Input' },
          ctx: {
            type: 'object',
            title: 'Context',
            description: 'What the failed rule was given',
            properties: {
              max_length: {
                type: 'integer',
                description: 'string_too_long: the most characters allowed',
              },
              ge: {
                type: 'integer',
                description: 'greater_than_equal: the smallest value allowed',
              },
              le: { type: 'integer', description: 'less_than_equal: the largest value allowed' },
              error: { type: 'string', description: 'value_error and json_invalid: what is wrong' },
            },
            additionalProperties: false,
          },
        },
        required: ['type', 'loc', 'msg', 'input'],
      },
    },
  },
  required: ['detail'],
};
