import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import * as yup from 'yup';
import type { ReadBody, RequestBody } from './body.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

/** A JSON Schema (the OpenAPI 3.1 dialect). */
export type JsonSchema = Record<string, unknown>;

/** One status an operation can answer; no `schema`, no body. */
export interface Outcome {
  description: string;
  schema?: JsonSchema;
  example?: unknown;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export type Outcomes = Record<number, Outcome>;

export interface HeaderParameter {
  name: string;
  in: 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
}

type Infer<S> = S extends yup.Schema ? yup.InferType<S> : undefined;
type AnyObject = yup.AnyObjectSchema | undefined;
type AnySchema = yup.Schema | undefined;

export interface Route<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends AnySchema = AnySchema,
> {
  method: Method;
  /** As OpenAPI writes it (`/notes/{id}`), which names the route in metrics and traces. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  summary?: string;
  description?: string;
  /** What the route itself answers; the service adds what every route of it can answer. */
  responses?: Outcomes;
  session?: boolean;
  headers?: readonly HeaderParameter[];
  /** Left out of the OpenAPI document (pages, the document itself). */
  internal?: boolean;
  use?: Middleware[];
  handler(
    ctx: Context,
    // The body is read when the handler asks: a missing note may be reported before a bad body.
    input: { params: Infer<P>; query: Infer<Q>; body(): Promise<Infer<B>> },
  ): unknown;
}

/** One endpoint, declared once: validated, typed and documented by its schemas. */
export function route<
  P extends AnyObject = undefined,
  Q extends AnyObject = undefined,
  B extends AnySchema = undefined,
>(
  line: `${'GET' | 'POST' | 'PUT' | 'DELETE'} /${string}`,
  spec: Omit<Route<P, Q, B>, 'method' | 'path' | 'handler'>,
  handler: Route<P, Q, B>['handler'],
): Route {
  const [method, path] = line.split(' ') as [string, string];
  return { ...spec, method: method.toLowerCase() as Method, path, handler } as Route;
}

/** The parameters, query or body failed their schemas; one answer reports every failure. */
export class InvalidRequestError extends Error {
  name = 'InvalidRequestError';
  constructor(
    readonly params: yup.ValidationError | undefined,
    /** No `validation`: the body was not sent as JSON. */
    readonly body: { received: RequestBody; validation?: yup.ValidationError } | undefined,
    readonly query?: yup.ValidationError,
  ) {
    const failures = [params?.errors, query?.errors, body?.validation?.errors];
    super(failures.flat().filter(Boolean).join('; ') || 'Request body is not JSON');
  }
}

/** Each route on `router`, named after its OpenAPI path (`ctx.routerName`). */
export function mount(router: Router, routes: Route[], readBody: ReadBody): void {
  for (const declared of routes) {
    router[declared.method](
      declared.path,
      declared.path.replace(/\{(\w+)\}/g, ':$1'),
      validate(declared, readBody),
      ...(declared.use ?? []),
      (ctx) => declared.handler(ctx, ctx.state.input),
    );
  }
}

const failure = (value: unknown) => (value instanceof yup.ValidationError ? value : undefined);

/** The route's input in `ctx.state.input`, or an InvalidRequestError. */
function validate({ params, query, body }: Route, readBody: ReadBody): Middleware {
  const queryFields = Object.keys(query?.fields ?? {});
  return async (ctx, next) => {
    let read: Promise<unknown> | undefined;
    const validBody = () =>
      (read ??= body
        ? readBody(ctx).then((received) => validateBody(body, received))
        : Promise.resolve(undefined));
    const validParams = params && (await parameters(params, ctx.params));
    // A repeated query parameter counts by its last value, as in Starlette.
    const lastValues = queryFields.map((field) => [field, [ctx.query[field]].flat().at(-1)]);
    const validQuery = query && (await parameters(query, Object.fromEntries(lastValues)));
    if (failure(validParams) || failure(validQuery)) {
      const bodyFailure = await validBody().then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof InvalidRequestError) return error.body;
          throw error;
        },
      );
      throw new InvalidRequestError(failure(validParams), bodyFailure, failure(validQuery));
    }
    ctx.state.input = { params: validParams, query: validQuery, body: validBody };
    await next();
  };
}

/** A body as its schema says: not coerced (a number is not a string), every failure reported. */
async function validateBody(schema: yup.Schema, received: RequestBody): Promise<unknown> {
  if (received.kind === 'other') throw new InvalidRequestError(undefined, { received });
  const value = received.kind === 'json' ? received.value : undefined;
  return schema.validate(value, { strict: true, abortEarly: false }).catch((error: unknown) => {
    if (error instanceof yup.ValidationError)
      throw new InvalidRequestError(undefined, { received, validation: error });
    throw error;
  });
}

/** Path or query parameters, converted from text by their schemas; or what failed. */
const parameters = (schema: yup.AnyObjectSchema, raw: Record<string, unknown>) =>
  schema.validate(raw, { abortEarly: false }).catch((error: unknown) => {
    if (error instanceof yup.ValidationError) return error;
    throw error;
  });
