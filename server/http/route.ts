import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import * as yup from 'yup';
import type { ReadBody, RequestBody } from './body.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

/** A JSON Schema (the OpenAPI 3.1 dialect). */
export type JsonSchema = Record<string, unknown>;

/** One status an operation can answer, as its OpenAPI document describes it. */
export interface Outcome {
  description: string;
  /** The JSON body's schema; absent when the answer has no body. */
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

/** What a handler is given: the path and query parameters, valid, and the body on demand. */
export interface Input<Params, Query, Body> {
  params: Params;
  query: Query;
  /**
   * Reads the body and validates it against the route's schema; left to the handler, which decides
   * what is checked first (a missing note before a malformed body, say).
   */
  body(): Promise<Body>;
}

type AnyObject = yup.AnyObjectSchema | undefined;
type AnySchema = yup.Schema | undefined;

/** One endpoint: its method and path, its input schemas, its outcomes and its handler. */
export interface Route<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends AnySchema = AnySchema,
> {
  method: Method;
  /** Written as OpenAPI writes it (`/notes/{id}`), which names the route for metrics and traces. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  summary?: string;
  description?: string;
  /** What the route itself answers; the service adds what every route of it can answer. */
  responses?: Outcomes;
  /** Authenticated by the session cookie (documented as the operation's security). */
  session?: boolean;
  /** Request headers the handler reads, as OpenAPI parameters. */
  headers?: readonly HeaderParameter[];
  /** Not part of the API's contract (pages, the document itself): left out of the document. */
  internal?: boolean;
  /** Middleware between the validation and the handler (a page's own headers, say). */
  use?: Middleware[];
  handler(ctx: Context, input: Input<Infer<P>, Infer<Q>, Infer<B>>): unknown;
}

/**
 * Declares an endpoint in one place: `route('PUT /notes/{id}', { params, body, responses },
 * handler)`. The schemas validate the request, type the handler's input and describe the operation
 * in the service's OpenAPI document.
 */
export function route<
  P extends AnyObject = undefined,
  Q extends AnyObject = undefined,
  B extends AnySchema = undefined,
>(
  line: `${'GET' | 'POST' | 'PUT' | 'DELETE'} /${string}`,
  spec: Omit<Route<P, Q, B>, 'method' | 'path' | 'handler'>,
  handler: Route<P, Q, B>['handler'],
): Route {
  const [method, path] = line.split(' ') as [Uppercase<Method>, string];
  return { ...spec, method: method.toLowerCase() as Method, path, handler } as Route;
}

/** The body did not satisfy the route's schema (`validation`), or was not sent as JSON at all. */
export interface BodyFailure {
  received: RequestBody;
  validation?: yup.ValidationError;
}

/**
 * The path parameters, the query or the body failed their schemas. When the parameters or the
 * query fail, the body is checked too, so that one answer reports every failure; each service
 * words this its own way.
 */
export class InvalidRequestError extends Error {
  name = 'InvalidRequestError';
  constructor(
    readonly params: yup.ValidationError | undefined,
    readonly body: BodyFailure | undefined,
    readonly query?: yup.ValidationError,
  ) {
    const failures = [params?.errors, query?.errors, body?.validation?.errors];
    super(failures.flat().filter(Boolean).join('; ') || 'Request body is not JSON');
  }
}

/**
 * Mounts each route on `router` as Koa middleware: its input validated, then its handler. The
 * route is named after its OpenAPI path (`ctx.routerName`), which the metrics and traces report.
 */
export function mount(router: Router, routes: Route[], readBody: ReadBody): void {
  for (const declared of routes) {
    const koaPath = declared.path.replace(/\{(\w+)\}/g, ':$1');
    router[declared.method](
      declared.path,
      koaPath,
      validate(declared, readBody),
      ...(declared.use ?? []),
      (ctx) => declared.handler(ctx, ctx.state.input),
    );
  }
}

/** The route's input as its schemas say, in `ctx.state.input`; or an InvalidRequestError. */
function validate(declared: Route, readBody: ReadBody): Middleware {
  const { params: paramsSchema, query: querySchema, body: bodySchema } = declared;
  const queryFields = querySchema ? Object.keys(querySchema.fields) : [];
  return async (ctx, next) => {
    let body: Promise<unknown> | undefined;
    const validBody = () =>
      (body ??= bodySchema
        ? readBody(ctx).then((received) => validateBody(bodySchema, received))
        : Promise.resolve(undefined));
    const params = paramsSchema && (await parameters(paramsSchema, ctx.params));
    const query =
      querySchema && (await parameters(querySchema, lastValues(ctx.query, queryFields)));
    if (params instanceof yup.ValidationError || query instanceof yup.ValidationError) {
      const failed = (value: unknown) => (value instanceof yup.ValidationError ? value : undefined);
      const bodyFailure = bodySchema
        ? await validBody().then(
            () => undefined,
            (error: unknown) => {
              if (error instanceof InvalidRequestError) return error.body;
              throw error;
            },
          )
        : undefined;
      throw new InvalidRequestError(failed(params), bodyFailure, failed(query));
    }
    ctx.state.input = { params, query, body: validBody };
    await next();
  };
}

/** A body as its schema says: not coerced (a number is not a string), every failure reported. */
async function validateBody(schema: yup.Schema, received: RequestBody): Promise<unknown> {
  if (received.kind === 'other') throw new InvalidRequestError(undefined, { received });
  const value = received.kind === 'json' ? received.value : undefined;
  try {
    return await schema.validate(value, { strict: true, abortEarly: false });
  } catch (error) {
    if (error instanceof yup.ValidationError)
      throw new InvalidRequestError(undefined, { received, validation: error });
    throw error;
  }
}

/** Path or query parameters, which their schemas convert from text; or what failed. */
async function parameters(
  schema: yup.AnyObjectSchema,
  raw: Record<string, unknown>,
): Promise<unknown> {
  try {
    return await schema.validate(raw, { abortEarly: false });
  } catch (error) {
    if (error instanceof yup.ValidationError) return error;
    throw error;
  }
}

/**
 * The query's parameters named `fields`, each the last of its values when repeated (as Starlette).
 */
function lastValues(query: Context['query'], fields: string[]): Record<string, string | undefined> {
  return Object.fromEntries(
    fields.map((field) => {
      const value = query[field];
      return [field, Array.isArray(value) ? value.at(-1) : value];
    }),
  );
}
