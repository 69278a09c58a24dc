import * as yup from 'yup';
import { clientKey } from '../http/clientAddress.js';
import { serviceApp, type ErrorAnswer } from '../http/app.js';
import { describeServerError, HttpError, MalformedJsonError, notFound } from '../http/errors.js';
import { messageOutcomes, type Contract } from '../http/openapi.js';
import { InvalidRequestError, route, type JsonSchema } from '../http/route.js';
import {
  NEXT_PAGE,
  noteFailures,
  PAGE_LIMIT,
  sendList,
  sendNote,
  sendRead,
  spend,
  written,
} from './answers.js';
import { maxChars, text } from '../http/fields.js';
import {
  IDEMPOTENCY_KEY,
  IdempotencyConflict,
  idempotencyKey,
  idempotentCreates,
} from './idempotency.js';
import { noteLists } from './list.js';
import type { NotesDeps } from './notes8080.js';
import { ETAG_HEADER, IF_MATCH, IF_NONE_MATCH, ifMatch } from './preconditions.js';
import {
  HTTPValidationError,
  laxInteger,
  malformedJsonEntry,
  validationEntries,
} from './pydantic.js';
import { MAX_NOTE_ID, noteTable, storedBytes, versionIn } from './table.js';
import { createdBytes, textBytes, WriteBudget } from './writeBudget.js';

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
const NOTE_DELETED = 'ノートを削除しました';
export const TITLE_MAX_CHARS = 100;

/** A failure worded as one message: `{detail: "…"}`. */
export const { schema: HTTPError, outcome: message } = messageOutcomes('HTTPError', 'detail');

/**
 * The body of a create; other fields are ignored. An empty string is a valid text, as in Pydantic.
 */
const NoteCreate = yup
  .object({
    title: maxChars(text(), TITLE_MAX_CHARS).nonNullable().defined(),
    content: text().nonNullable().defined(),
  })
  .nonNullable()
  .defined()
  .label('NoteCreate');

/**
 * The body of a partial update: a field left out or null keeps its value. Pydantic's `default:
 * null` is said in words, not as a `default`: client generators read a property with a default
 * as one always present, which would make `{}` and `{"title": "…"}` ill-typed.
 */
const NoteUpdate = yup
  .object({
    title: maxChars(text(), TITLE_MAX_CHARS)
      .nullable()
      .meta({ description: 'Optional, default null: left out or null, the title is kept' }),
    content: text()
      .nullable()
      .meta({ description: 'Optional, default null: left out or null, the content is kept' }),
  })
  .nonNullable()
  .defined()
  .label('NoteUpdate');

const NoteId = yup.object({ note_id: laxInteger().defined() });

/** `GET /notes`'s paging, as FastAPI reads `Query(None, ge=…, le=…)` integers. */
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

/** A note as the API shows it: exactly these five fields. */
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

const Health: JsonSchema = {
  type: 'object',
  title: 'Health',
  properties: { status: { type: 'string', const: 'healthy', title: 'Status' } },
  required: ['status'],
};

const Message: JsonSchema = {
  type: 'object',
  title: 'Message',
  properties: { message: { type: 'string', title: 'Message', examples: [NOTE_DELETED] } },
  required: ['message'],
};

const { missing, capped, preconditioned, budgeted, listed } = noteFailures(message, NOTE_NOT_FOUND);
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
function shape(error: unknown): ErrorAnswer {
  if (error instanceof InvalidRequestError)
    return { status: 422, body: { detail: validationEntries(error) } };
  if (error instanceof MalformedJsonError)
    return { status: 422, body: { detail: [malformedJsonEntry(error)] } };
  if (error instanceof IdempotencyConflict) return { status: 422, body: { detail: error.message } };
  if (error instanceof HttpError)
    return { status: error.status, body: { detail: error.message }, headers: error.headers };
  return { status: 500, body: { detail: describeServerError(error) } };
}

/**
 * Python's `datetime.isoformat()` of the naive UTC timestamp, with the column's microseconds, the
 * fraction left out when it is exactly zero.
 */
const isoformat = (column: string) =>
  `replace(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '.000000', '') AS ${column}`;
const PRESENTED = `id, title, content, ${isoformat('created_at')}, ${isoformat('updated_at')}`;

/** Ids no note can have are not sent to PostgreSQL, which would refuse them. */
const canExist = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_NOTE_ID;

/**
 * The notes service of docs/specs/notes-service-8000.md, answering as FastAPI does: `{detail}`
 * bodies, 422 validation failures in Pydantic's shape, `/docs`, a trailing slash redirected away.
 * Each handler reads its body first: FastAPI validates the whole request before the endpoint runs.
 */
export function notes8000App({ db, logger, config, edge, ...hosting }: NotesDeps) {
  const shapeOfTable = {
    service: 'notes8000',
    textColumn: 'content',
    presented: PRESENTED,
  } as const;
  const table = noteTable(db, shapeOfTable);
  const list = noteLists(db, shapeOfTable);
  const budget = new WriteBudget(config.writeBytesPerMinute);
  const createOnce = idempotentCreates(db, config.idempotencyTtlSeconds);
  // A null parameter keeps the stored value. The version and `updated_at` move only when the note
  // does (an update that changes nothing leaves it as it was, as SQLAlchemy, which then sends no
  // UPDATE at all, does).
  const changed =
    '(title::text, content) IS DISTINCT FROM (coalesce($2::text, title), coalesce($3::text, content))';
  const update = table.statement(
    'update',
    `WITH updated AS (
      UPDATE notes SET title = coalesce($2::text, title), content = coalesce($3::text, content),
        version = version + CASE WHEN ${changed} THEN 1 ELSE 0 END,
        updated_at = CASE WHEN ${changed} THEN now() ELSE updated_at END
      WHERE id = $1 AND ${versionIn(4)} RETURNING *
    ) ${table.rendered('updated')}`,
  );
  hosting.metrics?.storage('notes8000', () => storedBytes(db), config.maxBytes);

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
        summary: 'List Notes',
        description: `All notes, newest \`id\` first; or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), one page of at most ${PAGE_LIMIT} and a Link to the next.`,
        query: ListQuery,
        responses: {
          200: { ...success({ type: 'array', items: Note }), headers: NEXT_PAGE },
          ...listed,
        },
      },
      (ctx, { query }) => sendList(ctx, table, list, query),
    ),

    route(
      'POST /notes',
      {
        summary: 'Create Note',
        body: NoteCreate,
        headers: [IDEMPOTENCY_KEY],
        responses: {
          201: { ...success(Note), headers: ETAG_HEADER },
          400: message(
            'The Idempotency-Key is malformed',
            'Idempotency-Key must be 1 to 255 visible ASCII characters',
          ),
          422: message(
            'The Idempotency-Key was used with another body',
            new IdempotencyConflict().message,
          ),
          ...budgeted,
          ...capped,
        },
      },
      async (ctx, { body }) => {
        const key = idempotencyKey(ctx);
        const { title, content } = await body();
        const client = clientKey(ctx.ip);
        spend(
          budget,
          client,
          createdBytes([title, content], key === undefined ? undefined : { client, key }),
        );
        if (!key) return sendNote(ctx, 201, await table.insert(title, content));
        const json = await createOnce(client, key, { title, content }, (keyed) =>
          table.insertKeyed(title, content, keyed),
        );
        // A created note's first version.
        sendNote(ctx, 201, { json, etag: '"1"' });
      },
    ),

    route(
      'GET /notes/{note_id}',
      {
        summary: 'Get Note',
        params: NoteId,
        headers: [IF_NONE_MATCH],
        responses: {
          200: { ...success(Note), headers: ETAG_HEADER },
          304: { description: 'The copy If-None-Match names is current', headers: ETAG_HEADER },
          ...missing,
        },
      },
      async (ctx, { params }) => {
        const note = canExist(params.note_id) ? await table.find(params.note_id) : undefined;
        if (!note) throw notFound(NOTE_NOT_FOUND);
        sendRead(ctx, note);
      },
    ),

    route(
      'PUT /notes/{note_id}',
      {
        summary: 'Update Note',
        description:
          'Partial update: a field left out or null keeps its value. With If-Match, a note changed since (or deleted) is 412 and nothing changes.',
        params: NoteId,
        body: NoteUpdate,
        headers: [IF_MATCH],
        responses: {
          200: { ...success(Note), headers: ETAG_HEADER },
          ...missing,
          ...preconditioned,
          ...budgeted,
          ...capped,
        },
      },
      async (ctx, { params, body }) => {
        const { title, content } = await body();
        if (!canExist(params.note_id)) throw notFound(NOTE_NOT_FOUND);
        spend(budget, clientKey(ctx.ip), textBytes(title ?? '', content ?? ''));
        const outcome =
          title == null && content == null
            ? await table.check(params.note_id, ifMatch(ctx))
            : await table.update(
                update,
                params.note_id,
                [title ?? null, content ?? null],
                ifMatch(ctx),
              );
        sendNote(ctx, 200, written(outcome, NOTE_NOT_FOUND));
      },
    ),

    route(
      'DELETE /notes/{note_id}',
      {
        summary: 'Delete Note',
        params: NoteId,
        headers: [IF_MATCH],
        responses: { 200: success(Message), ...missing, ...preconditioned },
      },
      async (ctx, { params }) => {
        if (!canExist(params.note_id)) throw notFound(NOTE_NOT_FOUND);
        written(await table.remove(params.note_id, ifMatch(ctx)), NOTE_NOT_FOUND);
        ctx.body = { message: NOTE_DELETED };
      },
    ),
  ];

  return serviceApp({
    name: 'notes8000',
    contract,
    routes,
    shape,
    logger,
    edge,
    bodyLimitBytes: config.bodyLimitBytes,
    ready: () => db.query('SELECT 1'),
    redirectTrailingSlash: true,
    ...hosting,
  });
}
