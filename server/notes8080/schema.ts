import * as yup from 'yup';
import { maxChars, withoutNul } from '../shared/validate.js';
import { messages } from './messages.js';

export const TITLE_MAX_CHARS = 200;

/** What a JSON value that is not an object is, for the error message. */
function describeJsonValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean'
    ? `a ${typeof value}`
    : 'that';
}

/**
 * The body of a create or an update. Any other field (`id`, `created_at`, unknown ones) is
 * ignored: the store assigns `id` and `created_at`.
 */
export const NoteInput = yup
  .object({
    title: maxChars(withoutNul(yup.string().typeError(messages.titleNotString)), TITLE_MAX_CHARS)
      .min(1, messages.titleEmpty)
      .nonNullable(messages.titleNotString)
      .defined(messages.titleRequired),
    // `null` counts as an empty body (issue 2).
    body: withoutNul(yup.string().typeError(messages.bodyNotString)).nullable(),
  })
  .typeError(({ value }) => messages.bodyNotObject(describeJsonValue(value)))
  .nonNullable(messages.bodyNotObject('null'))
  .defined(messages.bodyRequired);

export type NoteInput = yup.InferType<typeof NoteInput>;
