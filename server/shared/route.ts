import type { Context } from 'koa';
import * as yup from 'yup';
import type { Answer } from './answer.js';
import type { RequestBody } from './body.js';
import { compileCheck } from './compiledCheck.js';

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

type Infer<S> = S extends yup.Schema ? yup.InferType<S> : undefined;

/**
 * What a handler is given: the path and query parameters, already valid, and the body, read and
 * validated on demand.
 */
export interface Input<Params, Body, Query = undefined> {
  params: Params;
  query: Query;
  /**
   * Reads the body and validates it against the route's schema. Left to the handler, so that
   * it decides what is checked first (a missing note before a malformed body, say).
   */
  body(): Promise<Body>;
}

/** What an endpoint says about itself in the service's OpenAPI document. */
interface Documented {
  summary: string;
  description?: string;
  /** What the route itself answers; the service adds what every route of it can answer. */
  responses: Outcomes;
  /** Authenticated by the session cookie (documented as the operation's security). */
  session?: boolean;
  /** Request headers the handler reads, as OpenAPI parameters. */
  headers?: readonly HeaderParameter[];
  internal?: false;
}

export interface HeaderParameter {
  name: string;
  in: 'header';
  required: boolean;
  description: string;
  schema: JsonSchema;
}

export const isDocumented = (route: Route): route is Route & Documented => !route.internal;

/** Not part of the API contract (pages, the document itself): left out of the OpenAPI document. */
interface Internal {
  internal: true;
}

export type RouteSpec<P, B, Q = undefined> = {
  /** Path parameters, validated (and converted) before the handler runs. */
  params?: P;
  /** Query parameters, validated (and converted) before the handler runs; others are ignored. */
  query?: Q;
  /** The JSON body the handler may ask for. */
  body?: B;
} & (Documented | Internal);

/**
 * An API route returns its answer; a route outside the API's contract (a page) answers through
 * Koa's context and returns nothing.
 */
export type Handler<P, B, Q = undefined> = (
  ctx: Context,
  input: Input<Infer<P>, Infer<B>, Infer<Q>>,
) => Answer | void | Promise<Answer | void>;

/** One endpoint: its route line, input schemas, documented outcomes and handler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any route, whatever its schemas
type AnySchema = any;
export type Route<
  P extends yup.AnyObjectSchema | undefined = AnySchema,
  B extends yup.Schema | undefined = AnySchema,
  Q extends yup.AnyObjectSchema | undefined = AnySchema,
> = RouteSpec<P, B, Q> & {
  method: Method;
  /** Written as OpenAPI writes it (`/notes/{id}`); the router gets the same path. */
  path: string;
  handler: Handler<P, B, Q>;
};

/**
 * Declares an endpoint in one place: `route('PUT /notes/{id}', { params, body, responses… },
 * handler)`. The schemas type the handler's input.
 */
export function route<
  P extends yup.AnyObjectSchema | undefined = undefined,
  B extends yup.Schema | undefined = undefined,
  Q extends yup.AnyObjectSchema | undefined = undefined,
>(
  line: `${'GET' | 'POST' | 'PUT' | 'DELETE'} /${string}`,
  spec: RouteSpec<P, B, Q>,
  handler: Handler<P, B, Q>,
): Route<P, B, Q> {
  const [method, path] = line.split(' ') as [Uppercase<Method>, string];
  return { ...spec, method: method.toLowerCase() as Method, path, handler };
}

/**
 * The body did not satisfy the route's schema (`validation`), or was not sent as JSON at all (no
 * `validation`).
 */
export interface BodyFailure {
  received: RequestBody;
  validation?: yup.ValidationError;
}

/**
 * The path parameters, the query or the body failed their schemas. When the parameters or the
 * query fail, the body is checked too, so that one answer reports every failure. Each service
 * words this its own way.
 */
export class InvalidRequestError extends Error {
  constructor(
    readonly params: yup.ValidationError | undefined,
    readonly body: BodyFailure | undefined,
    readonly query?: yup.ValidationError,
  ) {
    super(
      [
        params?.errors,
        query?.errors,
        body?.validation?.errors ?? (body && ['Request body is not JSON']),
      ]
        .flat()
        .filter(Boolean)
        .join('; '),
    );
    this.name = 'InvalidRequestError';
  }
}

// Every failure is reported, not only the first. The options are a new object at each call:
// yup writes into the object it is given. A value the schema's compiled check passes skips yup
// (see compiledCheck.ts); any other goes to yup, which decides and words what is wrong.

/** The validation of a route's body: the body is not coerced (a number is not a string). */
export function bodyValidator<S extends yup.Schema>(
  schema: S,
): (received: RequestBody) => Promise<yup.InferType<S>> {
  const check =
    schema.type === 'object'
      ? compileCheck(schema as unknown as yup.AnyObjectSchema, { parse: false })
      : undefined;
  return async (received) => {
    if (received.kind === 'other') throw new InvalidRequestError(undefined, { received });
    const value = received.kind === 'json' ? received.value : undefined;
    if (check?.(value)) return value as yup.InferType<S>;
    try {
      return await schema.validate(value, { strict: true, abortEarly: false });
    } catch (error) {
      if (error instanceof yup.ValidationError)
        throw new InvalidRequestError(undefined, { received, validation: error });
      throw error;
    }
  };
}

/**
 * The validation of a route's path or query parameters: they are text, which their schemas
 * convert. It resolves with the value, or with the validation error (which the caller reports
 * with the body's, if any).
 */
export function parametersValidator<S extends yup.AnyObjectSchema>(
  schema: S,
): (raw: Record<string, string | undefined>) => Promise<yup.InferType<S> | yup.ValidationError> {
  const check = compileCheck(schema, { parse: true });
  return async (raw) => {
    const checked = check?.(raw);
    if (checked) return checked as yup.InferType<S>;
    try {
      return await schema.validate(raw, { abortEarly: false });
    } catch (error) {
      if (error instanceof yup.ValidationError) return error;
      throw error;
    }
  };
}
