import * as yup from 'yup';
import { maxChars, text } from '../http/fields.js';
import type { Contract } from '../http/openapi.js';
import { route, type JsonSchema } from '../http/route.js';
import { IdempotencyConflict } from './idempotency.js';
import { HTTPError, HTTPValidationError, laxInteger, message, shape } from './pydantic.js';
import { noteOperations, notesService, PAGE_LIMIT, withETag, type NotesDeps } from './service.js';
import { MAX_NOTE_ID } from './table.js';
import { textBytes } from './writeBudget.js';

const NOTE_DELETED = 'ノートを削除しました';
const TITLE_MAX_CHARS = 100;

/** The body of a create; other fields are ignored. An empty text is valid, as in Pydantic. */
const NoteCreate = yup
  .object({
    title: maxChars(text(), TITLE_MAX_CHARS).nonNullable().defined(),
    content: text().nonNullable().defined(),
  })
  .nonNullable()
  .defined()
  .label('NoteCreate');

/**
 * A partial update: a field left out or null keeps its value. Pydantic's `default: null` is said
 * in words: client generators read a property with a default as always present.
 */
const kept = (field: string) => ({
  description: `Optional, default null: left out or null, the ${field} is kept`,
});
const NoteUpdate = yup
  .object({
    title: maxChars(text(), TITLE_MAX_CHARS).nullable().meta(kept('title')),
    content: text().nullable().meta(kept('content')),
  })
  .nonNullable()
  .defined()
  .label('NoteUpdate');

const NoteId = yup.object({ note_id: laxInteger().defined() });

const ListQuery = yup.object({
  limit: laxInteger().min(1).max(PAGE_LIMIT).optional(),
  before: laxInteger().min(1).max(MAX_NOTE_ID).optional(),
});

/** Python's `datetime.isoformat()` of a naive UTC timestamp: no offset, no zero fraction. */
const naiveTimestamp = (title: string): JsonSchema => ({
  type: 'string',
  title,
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{6})?$',
  description: 'UTC, ISO 8601 without an offset, with microseconds unless they are zero',
  examples: ['2026-11-22T10:11:49.123456'],
});

const Note: JsonSchema = {
  type: 'object',
  title: 'Note',
  properties: {
    id: { type: 'integer', title: 'Id' },
    title: { type: 'string', title: 'Title', maxLength: TITLE_MAX_CHARS },
    content: { type: 'string', title: 'Content' },
    created_at: naiveTimestamp('Created At'),
    updated_at: naiveTimestamp('Updated At'),
  },
  required: ['id', 'title', 'content', 'created_at', 'updated_at'],
  additionalProperties: false,
};

/** FastAPI describes every success the same way. */
const success = (schema: JsonSchema) => ({ description: 'Successful Response', schema });

const object = (title: string, field: string, property: JsonSchema): JsonSchema => ({
  type: 'object',
  title,
  properties: { [field]: property },
  required: [field],
});
const Health = object('Health', 'status', { type: 'string', const: 'healthy', title: 'Status' });
const Message = object('Message', 'message', {
  type: 'string',
  title: 'Message',
  examples: [NOTE_DELETED],
});

const operations = noteOperations(message);
const invalid = { 422: { description: 'Validation Error', schema: HTTPValidationError } };

const contract: Contract = {
  title: 'Notes API',
  version: '0.1.0',
  description:
    'Notes with a title and content, stored in PostgreSQL, ' +
    'answering as FastAPI with Pydantic v2 does.',
  errorSchema: HTTPError,
  invalidBody: invalid,
  invalidParams: invalid,
  invalidQuery: invalid,
};

/** Python's `isoformat()` of the naive UTC timestamp: microseconds, left out when zero. */
const isoformat = (column: string) =>
  `replace(
    to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '.000000', ''
  ) AS ${column}`;
const SELECTED = `id, title, content, ${isoformat('created_at')}, ${isoformat('updated_at')}`;
// A null text keeps the stored one. The version and `updated_at` move only when the note does,
// as SQLAlchemy sends no UPDATE for an unchanged object.
const CHANGED = `(title::text, content) IS DISTINCT FROM
  (coalesce($2::text, title), coalesce($3::text, content))`;
const UPDATED = `title = coalesce($2::text, title), content = coalesce($3::text, content),
  version = version + CASE WHEN ${CHANGED} THEN 1 ELSE 0 END,
  updated_at = CASE WHEN ${CHANGED} THEN now() ELSE updated_at END`;

/**
 * The notes service of docs/specs/notes-service-8000.md, answering as FastAPI does. Each handler
 * reads its body first: FastAPI validates the whole request before the endpoint runs.
 */
export function notes8000App(deps: NotesDeps) {
  const notes = notesService(deps, {
    service: 'notes8000',
    textColumn: 'content',
    select: SELECTED,
    set: UPDATED,
  });

  const routes = [
    route(
      'GET /health',
      {
        summary: 'Health',
        description: 'Reports that the process is running.',
        responses: { 200: success(Health) },
      },
      (ctx) => {
        ctx.body = { status: 'healthy' };
      },
    ),

    route(
      'GET /notes',
      {
        ...operations.list('All notes', success({ type: 'array', items: Note })),
        query: ListQuery,
      },
      (ctx, { query }) => notes.list(ctx, query),
    ),

    route(
      'POST /notes',
      {
        ...operations.create({
          201: withETag(success(Note)),
          400: message(
            'The Idempotency-Key is malformed',
            'Idempotency-Key must be 1 to 255 visible ASCII characters',
          ),
          422: message(
            'The Idempotency-Key was used with another body',
            new IdempotencyConflict().message,
          ),
        }),
        body: NoteCreate,
      },
      (ctx, { body }) =>
        notes.create(ctx, async () => {
          const { title, content } = await body();
          return [title, content];
        }),
    ),

    route(
      'GET /notes/{note_id}',
      { ...operations.read(success(Note)), params: NoteId },
      (ctx, { params }) => notes.read(ctx, params.note_id),
    ),

    route(
      'PUT /notes/{note_id}',
      {
        ...operations.update(
          'Update Note',
          'Partial update: a field left out or null keeps its value. ' +
            'With If-Match, a note changed since (or deleted) is 412 and nothing changes.',
          success(Note),
        ),
        params: NoteId,
        body: NoteUpdate,
      },
      async (ctx, { params, body }) => {
        const { title = null, content = null } = await body();
        const bytes = textBytes(title ?? '', content ?? '');
        // Nothing to change: the note as it is, as SQLAlchemy sends no UPDATE then.
        const texts = title === null && content === null ? undefined : [title, content];
        await notes.update(ctx, params.note_id, bytes, texts);
      },
    ),

    route(
      'DELETE /notes/{note_id}',
      { ...operations.remove({ 200: success(Message) }), params: NoteId },
      async (ctx, { params }) => {
        await notes.remove(ctx, params.note_id);
        ctx.body = { message: NOTE_DELETED };
      },
    ),
  ];

  return notes.app({ contract, routes, shape, redirectTrailingSlash: true });
}
