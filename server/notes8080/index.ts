import {
  describeServerError,
  HttpError,
  MalformedJsonError,
  type ErrorAnswer,
} from '../shared/errors.js';
import { IdempotencyConflict } from '../shared/idempotency.js';
import type { Contract } from '../shared/openapi.js';
import { InvalidRequestError } from '../shared/route.js';
import { storedBytes } from '../shared/storageCap.js';
import { buildApp, ownSchema, type ServiceDescriptor, type NotesDeps } from '../shared/service.js';
import { ErrorBody, failure, NOTE_NOT_FOUND, noteRoutes } from './routes.js';

/**
 * The notes service of docs/specs/notes-service-8080.md: CRUD on `/notes`, `{error}` bodies on
 * failure.
 */
export const notes8080: ServiceDescriptor<NotesDeps> = {
  name: 'notes8080',
  database: ownSchema('notes8080'),
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
      ...hosting,
    });
  },
};

const contract: Contract = {
  title: 'Notes API (8080)',
  version: '1.0.0',
  description:
    'Notes with a title and a body, stored in PostgreSQL. Every failure answers `{error: string}`.',
  errorSchema: ErrorBody,
  invalidBody: {
    400: failure('The body is not valid JSON, or not a note', 'title is required'),
    415: failure(
      'The body was not sent as JSON',
      'Request body must be sent with Content-Type: application/json (got text/plain)',
    ),
  },
  invalidParams: {
    404: failure(
      'No note has this id (anything but a positive integer names none)',
      NOTE_NOT_FOUND,
    ),
  },
  invalidQuery: {
    400: failure('A query parameter is not valid', 'limit must be less than or equal to 1000'),
  },
};

/** Every failure as `{error: string}`. */
function answerFor(error: unknown): ErrorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({
    status,
    body: { error: message },
    headers,
  });
  if (error instanceof InvalidRequestError) {
    // An id that no note can have is reported as what it is: no such note.
    if (error.params) return answer(404, NOTE_NOT_FOUND);
    if (error.query) return answer(400, error.query.errors.join('; '));
    if (!error.body) return answer(404, NOTE_NOT_FOUND);
    const { received, validation } = error.body;
    if (!validation) {
      const contentType = received.kind === 'other' ? received.contentType : undefined;
      return answer(
        415,
        `Request body must be sent with Content-Type: application/json (got ${contentType ?? 'none'})`,
      );
    }
    return answer(400, validation.errors.join('; '));
  }
  if (error instanceof MalformedJsonError) {
    return answer(
      400,
      `Request body is not valid JSON: ${error.reason} (at character ${error.position})`,
    );
  }
  if (error instanceof IdempotencyConflict) return answer(400, error.message);
  if (error instanceof HttpError) return answer(error.status, error.message, error.headers);
  return answer(500, describeServerError(error));
}
