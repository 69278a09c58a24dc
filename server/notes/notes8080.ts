import * as yup from 'yup';
import type { ErrorAnswer } from '../http/app.js';
import { describeServerError, HttpError, MalformedJsonError, notFound } from '../http/errors.js';
import { maxChars, text, wholeNumber } from '../http/fields.js';
import { messageOutcomes, type Contract } from '../http/openapi.js';
import { InvalidRequestError, route, type JsonSchema } from '../http/route.js';
import { IdempotencyConflict } from './idempotency.js';
import {
  NOTE_NOT_FOUND,
  noteOperations,
  notesService,
  PAGE_LIMIT,
  withETag,
  type NotesDeps,
} from './service.js';
import { MAX_NOTE_ID } from './table.js';
import { textBytes } from './writeBudget.js';

const TITLE_MAX_CHARS = 200;

const { schema: ErrorBody, outcome: failure } = messageOutcomes('Error', 'error');

/** What a JSON value that is not an object is, for the error message. */
function describeJsonValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return ['number', 'string', 'boolean'].includes(typeof value) ? `a ${typeof value}` : 'that';
}

/** The body of a create or an update; other fields (`id`, `created_at`, …) are ignored. */
const NoteInput = yup
  .object({
    title: maxChars(text().typeError('title must be a string'), TITLE_MAX_CHARS)
      .min(1, 'title must not be empty')
      .nonNullable('title must be a string')
      .defined('title is required'),
    body: text().typeError('body must be a string').nullable(),
  })
  .typeError(({ value }) => `Request body must be a JSON object, not ${describeJsonValue(value)}`)
  .nonNullable('Request body must be a JSON object, not null')
  .defined('Request body is required: send a JSON object with a "title"')
  .label('NoteInput');

const NoteId = yup.object({ id: wholeNumber().min(1).max(MAX_NOTE_ID).defined() });

const ListQuery = yup.object({
  limit: wholeNumber().min(1).max(PAGE_LIMIT).optional(),
  before: wholeNumber().min(1).max(MAX_NOTE_ID).optional(),
});

const Note: JsonSchema = {
  type: 'object',
  title: 'Note',
  properties: {
    id: { type: 'integer', minimum: 1, maximum: MAX_NOTE_ID },
    title: { type: 'string', maxLength: TITLE_MAX_CHARS },
    body: { type: 'string' },
    created_at: {
      type: 'string',
      format: 'date-time',
      description: 'RFC 3339 in UTC with milliseconds',
      examples: ['2026-11-22T10:11:49.123Z'],
    },
  },
  required: ['id', 'title', 'body', 'created_at'],
};

const note = (description: string) => ({ description, schema: Note });
const operations = noteOperations(failure);

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
function shape(error: unknown): ErrorAnswer {
  const answer = (status: number, message: string, headers?: Record<string, string>) => ({
    status,
    body: { error: message },
    headers,
  });
  if (error instanceof InvalidRequestError) {
    // An id that no note can have is reported as what it is: no such note.
    if (error.params) return answer(404, NOTE_NOT_FOUND);
    if (error.query) return answer(400, error.query.errors.join('; '));
    const { received, validation } = error.body!;
    if (validation) return answer(400, validation.errors.join('; '));
    const type = received.kind === 'other' ? received.contentType : undefined;
    return answer(
      415,
      `Request body must be sent with Content-Type: application/json (got ${type ?? 'none'})`,
    );
  }
  if (error instanceof MalformedJsonError)
    return answer(
      400,
      `Request body is not valid JSON: ${error.reason} (at character ${error.position})`,
    );
  if (error instanceof IdempotencyConflict) return answer(400, error.message);
  if (error instanceof HttpError && error.expose)
    return answer(error.status, error.message, error.headers);
  return answer(500, describeServerError(error));
}

/** `created_at` as RFC 3339 in UTC with the column's milliseconds. */
const SELECTED = `id, title, body,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;
// The version moves only when the note does: replacing it with what it holds keeps its ETag.
const REPLACED = `title = $2::text, body = $3::text, version = version +
  CASE WHEN (title::text, body) IS DISTINCT FROM ($2::text, $3::text) THEN 1 ELSE 0 END`;

/** The notes service of docs/specs/notes-service-8080.md: CRUD on `/notes`, `{error}` bodies. */
export function notes8080App(deps: NotesDeps) {
  const notes = notesService(deps, {
    service: 'notes8080',
    textColumn: 'body',
    select: SELECTED,
    set: REPLACED,
  });

  const routes = [
    route(
      'GET /notes',
      {
        ...operations.list('Every note', {
          description: 'All notes, or one page of them',
          schema: { type: 'array', items: Note },
        }),
        query: ListQuery,
      },
      (ctx, { query }) => notes.list(ctx, query),
    ),

    route(
      'POST /notes',
      {
        ...operations.create({
          201: withETag(
            note(
              'The stored note (or, for a retry with the same Idempotency-Key and body, ' +
                'the one stored the first time)',
            ),
          ),
          400: failure(
            'The Idempotency-Key is malformed, or was used with another body',
            new IdempotencyConflict().message,
          ),
        }),
        body: NoteInput,
      },
      (ctx, { body }) =>
        notes.create(ctx, async () => {
          const input = await body();
          return [input.title, input.body ?? ''];
        }),
    ),

    route(
      'GET /notes/{id}',
      { ...operations.read(note('The note')), params: NoteId },
      (ctx, { params }) => notes.read(ctx, params.id),
    ),

    route(
      'PUT /notes/{id}',
      {
        ...operations.update(
          'Replace Note',
          'Replaces the title and the body; an omitted body becomes empty. ' +
            'A missing note is reported before an invalid body; ' +
            'with If-Match, a note changed since (or deleted) is 412 and nothing changes.',
          note('The note as replaced'),
        ),
        params: NoteId,
        body: NoteInput,
      },
      async (ctx, { params, body }) => {
        // Only an invalid body needs the lookup that tells a missing note (reported first) from it.
        const input = await body().catch(async (error: unknown) => {
          if (!(await notes.find(params.id))) throw notFound(NOTE_NOT_FOUND);
          throw error;
        });
        const values = [input.title, input.body ?? ''];
        await notes.update(ctx, params.id, textBytes(...values), values);
      },
    ),

    route(
      'DELETE /notes/{id}',
      { ...operations.remove({ 204: { description: 'Deleted' } }), params: NoteId },
      async (ctx, { params }) => {
        await notes.remove(ctx, params.id);
        ctx.status = 204;
      },
    ),
  ];

  return notes.app({ contract, routes, shape });
}
