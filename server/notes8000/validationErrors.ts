import type * as yup from 'yup';
import type { MalformedJsonError } from '../shared/errors.js';
import type { InvalidBodyError } from '../shared/validate.js';
import { messages } from './messages.js';
import type { IntParsingFailure } from './noteId.js';

/**
 * The one place where failed input becomes Pydantic v2's error entries, as FastAPI lists them
 * in a 422 `{detail: [...]}`. `input` is always what was received at `loc`.
 */
export interface ErrorEntry {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** The request failed validation; `entries` are reported as they are, in order. */
export class RequestValidationError extends Error {
  constructor(readonly entries: ErrorEntry[]) {
    super(entries.map((entry) => entry.msg).join('; '));
    this.name = 'RequestValidationError';
  }
}

export function malformedJsonEntry(error: MalformedJsonError): ErrorEntry {
  return {
    type: 'json_invalid',
    loc: ['body', error.position],
    msg: messages.jsonInvalid,
    input: {},
    ctx: { error: error.reason },
  };
}

export function pathIntegerEntry(name: string, raw: string, failure: IntParsingFailure): ErrorEntry {
  const msg = failure === 'int_parsing' ? messages.intParsing : messages.intParsingSize;
  return { type: failure, loc: ['path', name], msg, input: raw };
}

/**
 * Entries for a body that did not satisfy `schema`: one per failing field, in the schema's
 * field order. Where yup reports several failures for one field, the one Pydantic would stop
 * at wins (type before length before the NUL check).
 */
export function bodyEntries(error: InvalidBodyError, schema: yup.ObjectSchema<yup.AnyObject>): ErrorEntry[] {
  const { body, validation } = error;
  if (body.kind === 'other' || !validation) {
    // Not declared as JSON: FastAPI hands the raw text to the model, which is no object.
    const input = body.kind === 'other' ? body.raw : null;
    return [{ type: 'model_attributes_type', loc: ['body'], msg: messages.notAnObject, input }];
  }
  const received = body.kind === 'json' ? body.value : null;
  const fieldOrder = Object.keys(schema.fields);
  const byField = new Map<string, yup.ValidationError>();
  for (const failure of validation.inner.length > 0 ? validation.inner : [validation]) {
    const field = failure.path ?? '';
    const kept = byField.get(field);
    if (!kept || precedence(failure) < precedence(kept)) byField.set(field, failure);
  }
  return [...byField.entries()]
    .sort(([a], [b]) => fieldOrder.indexOf(a) - fieldOrder.indexOf(b))
    .map(([field, failure]) => (field === '' ? bodyEntry(failure) : fieldEntry(field, failure, received)));
}

const PRECEDENCE = ['optionality', 'nullable', 'typeError', 'max'];

function precedence(failure: yup.ValidationError): number {
  const rank = PRECEDENCE.indexOf(failure.type ?? '');
  return rank === -1 ? PRECEDENCE.length : rank;
}

/** The body as a whole: absent or `null`, or a JSON value that is not an object. */
function bodyEntry(failure: yup.ValidationError): ErrorEntry {
  if (failure.type === 'typeError') {
    return { type: 'model_attributes_type', loc: ['body'], msg: messages.notAnObject, input: failure.value };
  }
  return { type: 'missing', loc: ['body'], msg: messages.fieldRequired, input: null };
}

function fieldEntry(field: string, failure: yup.ValidationError, received: unknown): ErrorEntry {
  const loc = ['body', field];
  switch (failure.type) {
    case 'optionality':
      // A missing field has no value of its own: Pydantic shows the object it is missing from.
      return { type: 'missing', loc, msg: messages.fieldRequired, input: received };
    case 'nullable':
    case 'typeError':
      return { type: 'string_type', loc, msg: messages.stringType, input: failure.value };
    case 'max': {
      const max = Number(failure.params?.max);
      return { type: 'string_too_long', loc, msg: messages.stringTooLong(max), input: failure.value, ctx: { max_length: max } };
    }
    default: {
      // Rules of this service beyond Pydantic's (its str accepts U+0000, which PostgreSQL then
      // refuses with a 500): reported as a custom validator's ValueError would be.
      const reason = SERVICE_RULES[failure.type ?? ''] ?? failure.message;
      return { type: 'value_error', loc, msg: messages.valueError(reason), input: failure.value, ctx: { error: reason } };
    }
  }
}

const SERVICE_RULES: Record<string, string> = {
  no_nul: messages.nulCharacter,
  well_formed: messages.unpairedSurrogate,
};
