import * as yup from 'yup';
import { maxChars, withoutNul } from '../shared/validate.js';

export const TITLE_MAX_CHARS = 100;

/** Text PostgreSQL can store as sent: no U+0000, and no half of a surrogate pair (which would become U+FFFD). */
const text = () =>
  withoutNul(yup.string()).test('well_formed', '${path} must be well-formed Unicode', (value) => !value || !/\p{Cs}/u.test(value));

/**
 * The body of a create. Other fields (`id`, the timestamps, unknown ones) are ignored: the
 * store assigns them. An empty string is a valid title or content, as in Pydantic.
 */
export const NoteCreate = yup
  .object({
    title: maxChars(text(), TITLE_MAX_CHARS).nonNullable().defined(),
    content: text().nonNullable().defined(),
  })
  .nonNullable()
  .defined();

export type NoteCreate = yup.InferType<typeof NoteCreate>;

/**
 * The body of a partial update: a field left out or null keeps its value. The title obeys the
 * create's 100-character rule (issue 2), so an update can never fail in the store.
 */
export const NoteUpdate = yup
  .object({
    // Strict validation applies no default: the null default is what the OpenAPI document shows.
    title: maxChars(text(), TITLE_MAX_CHARS).nullable().default(null),
    content: text().nullable().default(null),
  })
  .nonNullable()
  .defined();

export type NoteUpdate = yup.InferType<typeof NoteUpdate>;
