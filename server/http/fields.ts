import * as yup from 'yup';

/**
 * A text field as PostgreSQL can store it exactly as sent: no U+0000 (which `text` cannot hold)
 * and no half of a surrogate pair (which would be stored as U+FFFD). The tests are named so that
 * each service can word them its own way.
 */
const NO_NUL: yup.TestConfig<string | null | undefined> = {
  name: 'no_nul',
  message: '${path} must not contain the NUL character',
  test: (value) => !value?.includes('\u0000'),
};
const WELL_FORMED: yup.TestConfig<string | null | undefined> = {
  name: 'well_formed',
  message: '${path} must be well-formed Unicode',
  test: (value) => !value || !/\p{Cs}/u.test(value),
};

export const text = () => yup.string().test(NO_NUL).test(WELL_FORMED);

/** A whole number as a path or query writes it, at most 16 digits; anything else is NaN. */
export const wholeNumber = () =>
  yup
    .number()
    .typeError('${path} must be a whole number')
    .transform((_, raw) => (typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : NaN))
    .integer();

/**
 * At most `max` code points, as PostgreSQL's varchar counts them (yup's `max` counts UTF-16
 * units). Named `max` with `params.max`, like yup's, so the error shapes and the document agree.
 */
export const maxChars = (schema: yup.StringSchema<string | undefined | null>, max: number) =>
  schema.test({
    name: 'max',
    params: { max },
    message: '${path} must be at most ${max} characters',
    test: (value) => value == null || [...value].length <= max,
  });
