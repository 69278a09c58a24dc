import type { Middleware } from 'koa';
import * as yup from 'yup';
import type { RequestBody } from './body.js';

/**
 * The body was not JSON, or did not satisfy the route's schema. `validation` is absent when
 * the body was not JSON at all. Each service's error middleware words this its own way.
 */
export class InvalidBodyError extends Error {
  constructor(
    readonly body: RequestBody,
    readonly validation?: yup.ValidationError,
  ) {
    super(validation ? validation.errors.join('; ') : 'Request body is not JSON');
    this.name = 'InvalidBodyError';
  }
}

declare module 'koa' {
  interface DefaultState {
    input?: unknown;
  }
}

/**
 * Validates the body read by `readBody` against a yup schema, strictly (no coercion: a number
 * is not a string), reporting every failing field. The valid value lands in `ctx.state.input`.
 */
export function validate(schema: yup.Schema): Middleware {
  return async (ctx, next) => {
    const body: RequestBody = ctx.state.body ?? { kind: 'empty' };
    if (body.kind === 'other') throw new InvalidBodyError(body);
    const value = body.kind === 'json' ? body.value : undefined;
    try {
      ctx.state.input = await schema.validate(value, { strict: true, abortEarly: false });
    } catch (error) {
      if (error instanceof yup.ValidationError) throw new InvalidBodyError(body, error);
      throw error;
    }
    await next();
  };
}

/** A yup test for string fields: PostgreSQL text cannot hold U+0000. */
export const withoutNul = (schema: yup.StringSchema<string | undefined | null>) =>
  schema.test('no_nul', '${path} must not contain the NUL character', (value) => !value?.includes('\u0000'));

/**
 * At most `max` characters, counted as Unicode code points (as PostgreSQL's varchar counts
 * them), not UTF-16 units: a title of 200 emoji fits in 200. The test is named `max` with
 * `params.max`, like yup's own, so error presenters treat both alike.
 */
export const maxChars = (schema: yup.StringSchema<string | undefined | null>, max: number) =>
  schema.test({
    name: 'max',
    params: { max },
    message: '${path} must be at most ${max} characters',
    test: (value) => value == null || countCodePoints(value) <= max,
  });

function countCodePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
