import * as yup from 'yup';
import type { ErrorAnswer } from '../http/app.js';
import { describeServerError, HttpError, MalformedJsonError } from '../http/errors.js';
import { messageOutcomes } from '../http/openapi.js';
import { InvalidRequestError, type JsonSchema } from '../http/route.js';
import { IdempotencyConflict } from './idempotency.js';

// FastAPI's answers to a failure: `{detail}`, a message or Pydantic v2's validation entries.

export const { schema: HTTPError, outcome: message } = messageOutcomes('HTTPError', 'detail');

/** An entry of FastAPI's 422 `{detail: [...]}`, as Pydantic v2 words it: `input` is at `loc`. */
interface ErrorEntry {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: { max_length?: number; ge?: number; le?: number; error?: string };
}

const FIELD_REQUIRED = 'Field required';
const NOT_AN_OBJECT = 'Input should be a valid dictionary or object to extract fields from';
const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';
const INT_PARSING_SIZE = 'Unable to parse input string as an integer, exceeded maximum size';
/** This service's rules beyond Pydantic's, worded as a custom validator's ValueError. */
const SERVICE_RULES: Record<string, string> = {
  no_nul: 'String should not contain the NUL character (U+0000)',
  well_formed: 'String should not contain unpaired surrogates',
};
/** Pydantic gives up on integer strings longer than this. */
const MAX_INT_STRING_LENGTH = 4300;

/**
 * A path or query integer as Pydantic's lax mode reads a string: surrounding whitespace, a sign,
 * `12.000` and `1_000` allowed. Any size is an integer here; one no note can have is the store's.
 */
export const laxInteger = () =>
  yup
    .number()
    .transform((_value, raw) => (typeof raw === 'string' ? parseLaxInteger(raw) : raw))
    .test('int_parsing_size', INT_PARSING_SIZE, (value) => value !== Number.POSITIVE_INFINITY)
    .integer();

function parseLaxInteger(raw: string): number {
  const text = raw.trim();
  // Kept a number, so that the size rule, not the type, reports it.
  if (text.length > MAX_INT_STRING_LENGTH) return Number.POSITIVE_INFINITY;
  const underscores = /^_|_$|__/.test(text) ? '' : text.replaceAll('_', '');
  const digits = [text, text.replace(/\.0*$/, ''), underscores].find((candidate) =>
    /^[+-]?[0-9]+$/.test(candidate),
  );
  return digits === undefined ? Number.NaN : Number(digits);
}

const malformedJsonEntry = (error: MalformedJsonError): ErrorEntry => ({
  type: 'json_invalid',
  loc: ['body', error.position],
  msg: 'JSON decode error',
  input: {},
  ctx: { error: error.reason },
});

/** One entry per failed integer parameter: the first rule Pydantic stops at (type, then bounds). */
function parameterEntries(location: 'path' | 'query', failed?: yup.ValidationError): ErrorEntry[] {
  const names = [...new Set((failed?.inner ?? []).map((failure) => failure.path ?? ''))];
  return names.map((name): ErrorEntry => {
    const failures = failed!.inner.filter((failure) => failure.path === name);
    const input = failures[0]!.params?.originalValue;
    const loc = [location, name];
    const of = (type: string) => failures.find((failure) => failure.type === type);
    if (of('int_parsing_size'))
      return { type: 'int_parsing_size', loc, msg: INT_PARSING_SIZE, input };
    const [low, high] = of('typeError') ? [] : [of('min'), of('max')];
    if (low) {
      const ge = Number(low.params?.min);
      const msg = `Input should be greater than or equal to ${ge}`;
      return { type: 'greater_than_equal', loc, msg, input, ctx: { ge } };
    }
    if (high) {
      const le = Number(high.params?.max);
      const msg = `Input should be less than or equal to ${le}`;
      return { type: 'less_than_equal', loc, msg, input, ctx: { le } };
    }
    return { type: 'int_parsing', loc, msg: INT_PARSING, input };
  });
}

/** The entries of a request that failed validation: the path's, the query's, the body's. */
function validationEntries({ params, query, body }: InvalidRequestError): ErrorEntry[] {
  const entries = [...parameterEntries('path', params), ...parameterEntries('query', query)];
  if (!body) return entries;
  const { received, validation } = body;
  if (!validation) {
    // Not declared as JSON: FastAPI hands the raw text to the model, which is no object.
    const input = received.kind === 'other' ? received.raw : null;
    return [
      ...entries,
      { type: 'model_attributes_type', loc: ['body'], msg: NOT_AN_OBJECT, input },
    ];
  }
  const object = received.kind === 'json' ? received.value : null;
  // One entry per field, in the schema's order: the failure Pydantic would stop at.
  const byField = new Map<string, yup.ValidationError>();
  for (const failure of validation.inner.length > 0 ? validation.inner : [validation]) {
    const kept = byField.get(failure.path ?? '');
    if (!kept || precedence(failure) < precedence(kept)) byField.set(failure.path ?? '', failure);
  }
  for (const [field, failure] of byField)
    entries.push(field === '' ? bodyEntry(failure) : fieldEntry(field, failure, object));
  return entries;
}

const PRECEDENCE = ['optionality', 'nullable', 'typeError', 'max'];
const precedence = ({ type }: yup.ValidationError) =>
  PRECEDENCE.includes(type ?? '') ? PRECEDENCE.indexOf(type!) : PRECEDENCE.length;

/** The body as a whole: absent or `null`, or a JSON value that is not an object. */
const bodyEntry = (failure: yup.ValidationError): ErrorEntry =>
  failure.type === 'typeError'
    ? { type: 'model_attributes_type', loc: ['body'], msg: NOT_AN_OBJECT, input: failure.value }
    : { type: 'missing', loc: ['body'], msg: FIELD_REQUIRED, input: null };

function fieldEntry(field: string, failure: yup.ValidationError, received: unknown): ErrorEntry {
  const loc = ['body', field];
  const input = failure.value;
  switch (failure.type) {
    case 'optionality':
      // A missing field has no value of its own: Pydantic shows the object it is missing from.
      return { type: 'missing', loc, msg: FIELD_REQUIRED, input: received };
    case 'nullable':
    case 'typeError':
      return { type: 'string_type', loc, msg: 'Input should be a valid string', input };
    case 'max': {
      const max_length = Number(failure.params?.max);
      const msg = `String should have at most ${max_length} characters`;
      return { type: 'string_too_long', loc, msg, input, ctx: { max_length } };
    }
    default: {
      // Pydantic's str accepts these, and PostgreSQL would then refuse them with a 500.
      const error = SERVICE_RULES[failure.type ?? ''] ?? failure.message;
      return { type: 'value_error', loc, msg: `Value error, ${error}`, input, ctx: { error } };
    }
  }
}

const integer = (description: string) => ({ type: 'integer', description });

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
              max_length: integer('string_too_long: the most characters allowed'),
              ge: integer('greater_than_equal: the smallest value allowed'),
              le: integer('less_than_equal: the largest value allowed'),
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

/** Every failure as `{detail}`: validation failures as Pydantic's entries, others as a message. */
export function shape(error: unknown): ErrorAnswer {
  if (error instanceof InvalidRequestError)
    return { status: 422, body: { detail: validationEntries(error) } };
  if (error instanceof MalformedJsonError)
    return { status: 422, body: { detail: [malformedJsonEntry(error)] } };
  if (error instanceof IdempotencyConflict) return { status: 422, body: { detail: error.message } };
  if (error instanceof HttpError && error.expose)
    return { status: error.status, body: { detail: error.message }, headers: error.headers };
  return { status: 500, body: { detail: describeServerError(error) } };
}
