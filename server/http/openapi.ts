import type * as yup from 'yup';
import type { ErrorAnswer } from './app.js';
import { BODY_ENCODINGS, UNREADABLE_BODY } from './body.js';
import { INVALID_HOST } from './edge.js';
import { badRequest, HttpError, notFound, unsupportedMediaType } from './errors.js';
import type { JsonSchema, Method, Outcome, Outcomes, Route } from './route.js';

/** What a service says about itself beyond its routes. */
export interface Contract {
  title: string;
  version: string;
  description: string;
  /** The schema of the service's failure answers (one message: `{error}`, `{detail}`). */
  errorSchema: JsonSchema;
  /** How the service answers a body that fails its schema, or is not JSON. */
  invalidBody: Outcomes;
  /** How the service answers path parameters that fail their schema. */
  invalidParams: Outcomes;
  /** How the service answers query parameters that fail their schema. */
  invalidQuery: Outcomes;
  /** Answers to requests no operation takes, beyond the shared 404 and 405. */
  unmatched?: Outcomes;
}

/**
 * What the document is made from: the service's contract, its routes, and how it words failures.
 */
export interface DocumentedService {
  contract: Contract;
  routes: Route[];
  shape(error: unknown): ErrorAnswer;
  /**
   * A path with a trailing slash whose slash-less form exists is redirected there, as Starlette
   * does.
   */
  redirectTrailingSlash?: boolean;
}

const SESSION_SCHEME = 'sessionCookie';
const LICENSE = { name: 'MIT', identifier: 'MIT' };

/**
 * Answers whose body is one message under `key` (`{error: "…"}`, `{detail: "…"}`): their schema,
 * titled `title`, and an outcome maker for the document.
 */
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

/**
 * The answers the shared machinery gives, each documented with the status and body the
 * service's own `answerFor` gives it: the document says what the code does.
 */
function sharedOutcomes({ contract, shape, redirectTrailingSlash }: DocumentedService) {
  const outcome = (description: string, error: unknown, headers?: Outcome['headers']): Outcomes => {
    const { status, body } = shape(error);
    return {
      [status]: {
        description,
        schema: contract.errorSchema,
        example: body,
        ...(headers && { headers }),
      },
    };
  };
  return {
    everyOperation: {
      ...outcome(
        'The Host header names a host this service does not answer (its <NAME>_ALLOWED_HOSTS)',
        badRequest(INVALID_HOST),
      ),
      ...outcome(
        'An unexpected failure, or the store failed (for example, the database is unreachable)',
        new Error('unexpected'),
      ),
      431: {
        description:
          'The request headers are larger than 16 KiB (answered by Node before the service reads the request; no body)',
      },
    },
    withBody: merge(
      outcome(
        'The body could not be read (gzip, deflate or br data that does not decompress, say)',
        badRequest(UNREADABLE_BODY),
      ),
      outcome('The body is larger than the limit', new HttpError(413, 'Request body too large')),
      outcome(
        `The body is sent with a Content-Encoding the service does not decompress (it reads ${BODY_ENCODINGS.join(', ')} and identity)`,
        unsupportedMediaType('Unsupported Content-Encoding: zstd'),
      ),
      outcome(
        'The body declares a charset other than UTF-8',
        unsupportedMediaType('Unsupported charset "latin1"'),
      ),
      contract.invalidBody,
    ),
    unmatched: merge(
      outcome('No such path', notFound()),
      outcome('The path does not take this method', new HttpError(405), {
        Allow: { description: 'The methods the path takes', schema: { type: 'string' } },
      }),
      {
        200: {
          description: 'OPTIONS: the methods the path takes, in Allow (no body)',
          headers: {
            Allow: { description: 'The methods the path takes', schema: { type: 'string' } },
          },
        },
      },
      redirectTrailingSlash ? TRAILING_SLASH_REDIRECT : {},
      contract.unmatched ?? {},
    ),
  };
}

/**
 * The routes of the paths that have paths beneath them (`/notes` beside `/notes/{note_id}`). With
 * the trailing-slash redirect, their slash form (`/notes/`) is documented as operations of its own:
 * whatever matches requests against the document (a client, a validating proxy) would otherwise
 * read it as an item with an empty id. Every other slash form is under `x-unmatched`.
 */
function collectionRoutes<R extends Route>(routes: R[]): R[] {
  return routes.filter((route) => routes.some((other) => other.path.startsWith(`${route.path}/`)));
}

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

/**
 * Outcomes of several sources; where two share a status, the answer is either (its body under
 * either schema), and the first example stands.
 */
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

/**
 * The OpenAPI 3.1 document of a service. Request bodies and path parameters are described from
 * the yup schemas that validate them. Every schema with a `title` is a named component,
 * referenced wherever it is used, as FastAPI lists its models.
 */
export function openApiDocument(service: DocumentedService) {
  const { contract } = service;
  const shared = sharedOutcomes(service);
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  const documented = service.routes.filter((route) => !route.internal);
  const describe = (outcomes: Outcomes) =>
    Object.fromEntries(
      Object.entries(outcomes)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, outcome]) => [status, describeOutcome(outcome, components)]),
    );
  const operation = (
    path: string,
    method: Method,
    summary: string,
    details: Record<string, unknown>,
  ) => {
    paths[path] ??= {};
    paths[path]![method] = {
      summary,
      operationId: `${summary.toLowerCase().replaceAll(' ', '_')}${path}_${method}`.replace(
        /\W/g,
        '_',
      ),
      ...details,
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
  if (service.redirectTrailingSlash) {
    for (const route of collectionRoutes(documented)) {
      operation(`${route.path}/`, route.method, `${route.summary!} Redirect`, {
        description: `Answered 307 with \`Location: ${route.path}\` (the query kept), as Starlette redirects a trailing slash: a client that follows it sends the same method and body there.`,
        security: [],
        responses: describe(merge(TRAILING_SLASH_REDIRECT, shared.everyOperation)),
      });
    }
  }
  const unmatched = describe(shared.unmatched);
  const usesSession = documented.some((route) => route.session);
  return {
    openapi: '3.1.0',
    info: {
      title: contract.title,
      version: contract.version,
      description: contract.description,
      license: LICENSE,
    },
    servers: [{ url: '/', description: 'This service' }],
    paths,
    // What a request that no operation takes is answered; it belongs to no operation.
    'x-unmatched': unmatched,
    components: {
      schemas: components.schemas,
      ...(usesSession && {
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

const json = (schema: JsonSchema, example?: unknown) => ({
  'application/json': { schema, ...(example !== undefined && { example }) },
});

function describeOutcome(
  { description, schema, example, headers }: Outcome,
  components: Components,
) {
  return {
    description,
    ...(headers && { headers }),
    ...(schema && { content: json(components.use(schema), example) }),
  };
}

/** Named schemas, each stored once and referenced by `$ref` wherever it appears. */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  use(schema: JsonSchema): JsonSchema {
    const inner = this.#within(schema);
    const title = inner.title;
    if (typeof title !== 'string' || inner.type !== 'object') return inner;
    const known = this.schemas[title];
    if (known && JSON.stringify(known) !== JSON.stringify(inner))
      throw new Error(`Two different schemas are titled ${title}`);
    this.schemas[title] = inner;
    return { $ref: `#/components/schemas/${title}` };
  }

  #within(schema: JsonSchema): JsonSchema {
    const copy: JsonSchema = { ...schema };
    if (isSchema(copy.items)) copy.items = this.use(copy.items);
    if (Array.isArray(copy.anyOf))
      copy.anyOf = copy.anyOf.map((member: JsonSchema) => this.use(member));
    if (isSchema(copy.properties)) {
      copy.properties = Object.fromEntries(
        Object.entries(copy.properties).map(([name, property]) => [
          name,
          this.#within(property as JsonSchema),
        ]),
      );
    }
    return copy;
  }
}

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parametersOf(params: yup.AnyObjectSchema, location: 'path' | 'query') {
  const { fields } = params.describe() as yup.SchemaObjectDescription;
  return Object.entries(fields).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !(field as yup.SchemaDescription).optional,
    schema: { ...valueJsonSchema(name, field as yup.SchemaDescription), title: titleOf(name) },
  }));
}

/**
 * The JSON Schema of a yup schema, from its `describe()`, shaped as FastAPI shows a Pydantic
 * model: titled properties, nullable fields as `anyOf [T, null]`. Only what the services'
 * schemas use is supported; anything else is a programming error.
 */
export function yupJsonSchema(schema: yup.Schema): JsonSchema {
  const description = schema.describe() as yup.SchemaObjectDescription;
  if (description.type !== 'object')
    throw new Error(`No JSON Schema for a ${description.type} body`);
  const fields = Object.entries(description.fields) as [string, yup.SchemaDescription][];
  return {
    type: 'object',
    ...(description.label && { title: description.label }),
    properties: Object.fromEntries(
      fields.map(([name, field]) => [name, fieldJsonSchema(name, field)]),
    ),
    required: fields.filter(([, field]) => !field.optional).map(([name]) => name),
  };
}

function fieldJsonSchema(name: string, field: yup.SchemaDescription): JsonSchema {
  const value = valueJsonSchema(name, field);
  const property: JsonSchema = field.nullable ? { anyOf: [value, { type: 'null' }] } : value;
  property.title = titleOf(name);
  const description = field.meta?.description;
  if (description !== undefined) property.description = description;
  return property;
}

function valueJsonSchema(name: string, field: yup.SchemaDescription): JsonSchema {
  const schema: JsonSchema = { type: field.type };
  if (field.type !== 'string' && field.type !== 'number')
    throw new Error(`No JSON Schema for the ${field.type} field ${name}`);
  for (const test of field.tests) {
    switch (test.name) {
      case 'max':
        schema[field.type === 'string' ? 'maxLength' : 'maximum'] = test.params?.max;
        break;
      case 'min':
        schema[field.type === 'string' ? 'minLength' : 'minimum'] = test.params?.min;
        break;
      case 'required':
        schema.minLength = 1;
        break;
      case 'no_nul':
        schema.pattern = '^[^\\u0000]*$';
        break;
      case 'integer':
        schema.type = 'integer';
        break;
      case 'email':
        schema.format = 'email';
        break;
      case 'well_formed':
      case 'int_parsing_size':
        // Said by the type already: JSON text is Unicode, and an integer has no length limit here.
        break;
      default:
        throw new Error(`No JSON Schema for the ${test.name} test of ${name}`);
    }
  }
  return schema;
}

/** `note_id` → `Note Id`, as Pydantic titles a field. */
export function titleOf(name: string): string {
  return name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
