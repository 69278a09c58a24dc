import type { ServiceOptions } from './app.js';
import { BODY_ENCODINGS, UNREADABLE_BODY } from './body.js';
import { httpError, INVALID_HOST } from './errors.js';
import { Components, parametersOf, titleOf, yupJsonSchema } from './jsonSchema.js';
import type { JsonSchema, Method, Outcome, Outcomes } from './route.js';

/** What a service says about itself beyond its routes. */
export interface Contract {
  title: string;
  version: string;
  description: string;
  /** The schema of the service's failure answers (`{error}`, `{detail}`). */
  errorSchema: JsonSchema;
  /** How the service answers a body that fails its schema, or is not JSON. */
  invalidBody: Outcomes;
  invalidParams: Outcomes;
  invalidQuery: Outcomes;
  /** Answers to requests no operation takes, beyond the shared 404 and 405. */
  unmatched?: Outcomes;
}

const SESSION_SCHEME = 'sessionCookie';
const ALLOW = { Allow: { description: 'The methods the path takes', schema: { type: 'string' } } };
const TRAILING_SLASH_REDIRECT: Outcomes = {
  307: {
    description: 'A path with a trailing slash whose slash-less form exists: redirected there',
    headers: {
      Location: {
        description: 'The same path without the trailing slash, and the same query',
        schema: { type: 'string' },
      },
    },
  },
};

/** Answers whose body is one message under `key` (`{error: "…"}`): their schema, and outcomes. */
export function messageOutcomes(title: string, key: string) {
  const schema: JsonSchema = {
    type: 'object',
    title,
    properties: { [key]: { type: 'string', title: titleOf(key) } },
    required: [key],
  };
  return {
    schema,
    outcome: (description: string, example: string): Outcome => ({
      description,
      schema,
      example: { [key]: example },
    }),
  };
}

/** What the shared machinery answers, documented with what the service's `shape` makes of it. */
function sharedOutcomes({ contract, shape, redirectTrailingSlash }: ServiceOptions) {
  const outcome = (description: string, error: unknown, headers?: Outcome['headers']): Outcomes => {
    const { status, body } = shape(error);
    const documented = { description, schema: contract.errorSchema, example: body };
    return { [status]: { ...documented, ...(headers && { headers }) } };
  };
  return {
    everyOperation: {
      ...outcome(
        'The Host header names a host this service does not answer (its <NAME>_ALLOWED_HOSTS)',
        httpError(400, INVALID_HOST),
      ),
      ...outcome(
        'An unexpected failure, or the store failed (for example, the database is unreachable)',
        new Error('unexpected'),
      ),
      431: {
        description:
          'The request headers are larger than 16 KiB ' +
          '(answered by Node before the service reads the request; no body)',
      },
    },
    withBody: merge(
      outcome(
        'The body could not be read (gzip, deflate or br data that does not decompress, say)',
        httpError(400, UNREADABLE_BODY),
      ),
      outcome('The body is larger than the limit', httpError(413, 'Request body too large')),
      outcome(
        `The body is sent with a Content-Encoding the service does not decompress ` +
          `(it reads ${BODY_ENCODINGS.join(', ')} and identity)`,
        httpError(415, 'Unsupported Content-Encoding: zstd'),
      ),
      outcome(
        'The body declares a charset other than UTF-8',
        httpError(415, 'Unsupported charset "latin1"'),
      ),
      contract.invalidBody,
    ),
    unmatched: merge(
      outcome('No such path', httpError(404)),
      outcome('The path does not take this method', httpError(405), ALLOW),
      {
        200: {
          description: 'OPTIONS: the methods the path takes, in Allow (no body)',
          headers: ALLOW,
        },
      },
      redirectTrailingSlash ? TRAILING_SLASH_REDIRECT : {},
      contract.unmatched ?? {},
    ),
  };
}

/** Outcomes of several sources; where two share a status, the answer is either. */
function merge(...sources: Outcomes[]): Outcomes {
  const merged: Outcomes = {};
  for (const source of sources) {
    for (const [status, outcome] of Object.entries(source) as [string, Outcome][]) {
      const known = merged[Number(status)];
      merged[Number(status)] = known ? either(known, outcome) : outcome;
    }
  }
  return merged;
}

/** Either body (under either schema); the first example stands. */
function either(first: Outcome, second: Outcome): Outcome {
  const same = JSON.stringify(first.schema) === JSON.stringify(second.schema);
  return {
    ...second,
    ...first,
    description:
      first.description === second.description
        ? first.description
        : `${first.description}; or: ${second.description}`,
    ...(!same &&
      first.schema &&
      second.schema && { schema: { anyOf: [first.schema, second.schema] } }),
  };
}

const json = (schema: JsonSchema, example?: unknown) => ({
  'application/json': { schema, ...(example !== undefined && { example }) },
});

/** The OpenAPI 3.1 document of a service, its schemas made from the yup schemas that validate. */
export function openApiDocument(service: ServiceOptions) {
  const { contract } = service;
  const shared = sharedOutcomes(service);
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  const documented = service.routes.filter((route) => !route.internal);
  const describe = (outcomes: Outcomes) =>
    Object.fromEntries(
      Object.entries(outcomes)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, { description, schema, example, headers }]) => [
          status,
          {
            description,
            ...(headers && { headers }),
            ...(schema && { content: json(components.use(schema), example) }),
          },
        ]),
    );
  const operation = (path: string, method: Method, summary: string, details: object) => {
    const operationId = `${summary.toLowerCase().replaceAll(' ', '_')}${path}_${method}`;
    paths[path] = {
      ...paths[path],
      [method]: { summary, operationId: operationId.replace(/\W/g, '_'), ...details },
    };
  };
  for (const route of documented) {
    const responses = merge(
      route.responses ?? {},
      route.params ? contract.invalidParams : {},
      route.query ? contract.invalidQuery : {},
      route.body ? shared.withBody : {},
      shared.everyOperation,
    );
    operation(route.path, route.method, route.summary!, {
      ...(route.description && { description: route.description }),
      security: route.session ? [{ [SESSION_SCHEME]: [] }] : [],
      ...((route.params || route.query || route.headers) && {
        parameters: [
          ...(route.params ? parametersOf(route.params, 'path') : []),
          ...(route.query ? parametersOf(route.query, 'query') : []),
          ...(route.headers ?? []),
        ],
      }),
      ...(route.body && {
        requestBody: { required: true, content: json(components.use(yupJsonSchema(route.body))) },
      }),
      responses: describe(responses),
    });
  }
  // With the redirect, `/notes/` beside `/notes/{id}` is an operation of its own: a client matching
  // requests against the document would otherwise read it as an item with an empty id.
  const collections = service.redirectTrailingSlash
    ? documented.filter((route) => documented.some((o) => o.path.startsWith(`${route.path}/`)))
    : [];
  for (const route of collections) {
    operation(`${route.path}/`, route.method, `${route.summary!} Redirect`, {
      description:
        `Answered 307 with \`Location: ${route.path}\` (the query kept), ` +
        `as Starlette redirects a trailing slash: ` +
        `a client that follows it sends the same method and body there.`,
      security: [],
      responses: describe(merge(TRAILING_SLASH_REDIRECT, shared.everyOperation)),
    });
  }
  return {
    openapi: '3.1.0',
    info: {
      title: contract.title,
      version: contract.version,
      description: contract.description,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This service' }],
    paths,
    // What a request that no operation takes is answered; it belongs to no operation.
    'x-unmatched': describe(shared.unmatched),
    components: {
      schemas: components.schemas,
      ...(documented.some((route) => route.session) && {
        securitySchemes: {
          [SESSION_SCHEME]: {
            type: 'apiKey',
            in: 'cookie',
            name: 'token',
            description: 'The session token that `POST /api/login` sets as an HttpOnly cookie.',
          },
        },
      }),
    },
  };
}
