import {
  describeServerError,
  HttpError,
  MalformedJsonError,
  type ErrorAnswer,
} from '../shared/errors.js';
import { IdempotencyConflict } from '../shared/idempotency.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError, type JsonSchema } from '../shared/route.js';
import { storedBytes } from '../shared/storageCap.js';
import { buildApp, ownSchema, type ServiceDescriptor, type NotesDeps } from '../shared/service.js';
import { malformedJsonEntry, validationEntries } from './pydantic.js';
import { HTTPError, noteRoutes } from './routes.js';

/**
 * The notes service of docs/specs/notes-service-8000.md, answering as FastAPI does: `{detail}`
 * bodies, 422 validation failures in Pydantic's shape, `/docs`, a trailing slash redirected away.
 */
export const notes8000: ServiceDescriptor<NotesDeps> = {
  name: 'notes8000',
  database: ownSchema('notes8000'),
  createApp: ({ db, logger, config, edge, ...hosting }) => {
    hosting.measures?.storage(() => storedBytes(db), config.maxBytes);
    return buildApp({
      contract,
      routes: noteRoutes(db, config),
      logger,
      edge,
      answerFor,
      bodyLimitBytes: config.bodyLimitBytes,
      ready: () => db.query('SELECT 1'),
      redirectTrailingSlash: true,
      ...hosting,
    });
  },
};

const HTTPValidationError: JsonSchema = {
  type: 'object',
  title: 'HTTPValidationError',
  properties: {
    detail: {
      type: 'array',
      title: 'Detail',
      items: {
        type: 'object',
        title: 'ValidationError',
        properties: {
          loc: {
            type: 'array',
            title: 'Location',
            items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          },
          msg: { type: 'string', title: 'Message' },
          type: { type: 'string', title: 'Error Type' },
          input: { title: 'Input' },
          ctx: {
            type: 'object',
            title: 'Context',
            description: 'What the failed rule was given',
            properties: {
              max_length: {
                type: 'integer',
                description: 'string_too_long: the most characters allowed',
              },
              ge: {
                type: 'integer',
                description: 'greater_than_equal: the smallest value allowed',
              },
              le: { type: 'integer', description: 'less_than_equal: the largest value allowed' },
              error: { type: 'string', description: 'value_error and json_invalid: what is wrong' },
            },
            additionalProperties: false,
          },
        },
        required: ['type', 'loc', 'msg', 'input'],
      },
    },
  },
  required: ['detail'],
};

const invalid = { 422: { description: 'Validation Error', schema: HTTPValidationError } };

const contract: Contract = {
  title: 'Notes API',
  version: '0.1.0',
  description:
    'Notes with a title and content, stored in PostgreSQL, answering as FastAPI with Pydantic v2 does.',
  errorSchema: HTTPError,
  invalidBody: invalid,
  invalidParams: invalid,
  invalidQuery: invalid,
};

/** Every failure as `{detail}`: validation failures as Pydantic's entries, others as a message. */
function answerFor(error: unknown): ErrorAnswer {
  if (error instanceof InvalidRequestError)
    return { status: 422, body: { detail: validationEntries(error) } };
  if (error instanceof MalformedJsonError)
    return { status: 422, body: { detail: [malformedJsonEntry(error)] } };
  if (error instanceof IdempotencyConflict) return { status: 422, body: { detail: error.message } };
  if (error instanceof HttpError)
    return { status: error.status, body: { detail: error.message }, headers: error.headers };
  return { status: 500, body: { detail: describeServerError(error) } };
}
