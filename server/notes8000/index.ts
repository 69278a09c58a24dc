import { fileURLToPath } from 'node:url';
import type { Database } from '../shared/database.js';
import { describeServerError, HttpError, MalformedJsonError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError, type JsonSchema } from '../shared/route.js';
import { buildApp, type ErrorAnswer, type ServiceDescriptor } from '../shared/service.js';
import { malformedJsonEntry, validationEntries } from './pydantic.js';
import { HTTPError, noteRoutes } from './routes.js';

export interface Notes8000Deps {
  db: Database;
  logger: Logger;
  bodyLimitBytes: number;
}

/**
 * The notes service of notes-service-8000.md, answering as FastAPI does: `{detail}` bodies,
 * 422 validation failures in Pydantic's shape, `/docs`, a trailing slash redirected away.
 */
export const notes8000: ServiceDescriptor<Notes8000Deps> = {
  name: 'notes8000',
  database: { schema: 'notes8000', migrations: fileURLToPath(new URL('./migrations', import.meta.url)) },
  createApp: ({ db, logger, bodyLimitBytes }) =>
    buildApp({ contract, routes: noteRoutes(db), logger, answerFor, bodyLimitBytes, redirectTrailingSlash: true }),
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
          loc: { type: 'array', title: 'Location', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string', title: 'Message' },
          type: { type: 'string', title: 'Error Type' },
          input: { title: 'Input' },
          ctx: { type: 'object', title: 'Context' },
        },
        required: ['type', 'loc', 'msg', 'input'],
      },
    },
  },
  required: ['detail'],
};

const message = (description: string, example: string) => ({ description, schema: HTTPError, example: { detail: example } });
const invalid = { 422: { description: 'Validation Error', schema: HTTPValidationError } };

const contract: Contract = {
  title: 'Notes API',
  version: '0.1.0',
  description: 'Notes with a title and content, stored in PostgreSQL, answering as FastAPI with Pydantic v2 does.',
  everyOperation: { 500: message('The store failed (for example, the database is unreachable)', 'database unavailable') },
  withBody: {
    ...invalid,
    400: message('The body could not be read (an unknown Content-Encoding, say)', 'Request body could not be read'),
    413: message('The body is larger than the limit', 'Request body too large'),
    415: message('The body declares a charset other than UTF-8', 'Unsupported charset "latin1"'),
  },
  withParams: invalid,
  unmatched: {
    307: {
      description: 'The path with a trailing slash: redirected to the path without it',
      headers: { Location: { description: 'The same path without the trailing slash', schema: { type: 'string' } } },
    },
    404: message('No such path', 'Not Found'),
    405: {
      ...message('The path does not take this method', 'Method Not Allowed'),
      headers: { Allow: { description: 'The methods the path takes', schema: { type: 'string' } } },
    },
  },
};

/** Every failure as `{detail}`: validation failures as Pydantic's entries, others as a message. */
function answerFor(error: unknown): ErrorAnswer {
  if (error instanceof InvalidRequestError) return { status: 422, body: { detail: validationEntries(error) } };
  if (error instanceof MalformedJsonError) return { status: 422, body: { detail: [malformedJsonEntry(error)] } };
  if (error instanceof HttpError) return { status: error.status, body: { detail: error.message }, headers: error.headers };
  return { status: 500, body: { detail: describeServerError(error) } };
}
