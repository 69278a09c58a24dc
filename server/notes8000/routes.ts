import * as yup from 'yup';
import type { Database } from '../shared/database.js';
import type { NotesConfig } from '../shared/config.js';
import { found } from '../shared/errors.js';
import {
  createOnce,
  IDEMPOTENCY_KEY,
  IdempotencyConflict,
  idempotencyKey,
} from '../shared/idempotency.js';
import { maxChars, text } from '../shared/fields.js';
import { json } from '../shared/answer.js';
import {
  listAnswer,
  NEXT_PAGE,
  noteAnswer,
  noteFailures,
  PAGE_LIMIT,
  readAnswer,
  spend,
  written,
} from '../shared/noteAnswers.js';
import { CREATED_ETAG } from '../shared/noteTable.js';
import { messageAnswers } from '../shared/openapi.js';
import { ETAG_HEADER, IF_MATCH, IF_NONE_MATCH, ifMatch } from '../shared/preconditions.js';
import { route, type JsonSchema } from '../shared/route.js';
import { createdBytes, MAX_NOTE_ID, textBytes } from '../shared/safeWrites.js';
import { WriteBudget } from '../shared/writeBudget.js';
import { laxInteger } from './pydantic.js';
import { noteStore, type NoteChanges } from './store.js';

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
const NOTE_DELETED = 'ノートを削除しました';
export const TITLE_MAX_CHARS = 100;

/** A failure worded as one message: `{detail: "…"}`. */
export const { schema: HTTPError, outcome: message } = messageAnswers('HTTPError', 'detail');

/**
 * The body of a create. Other fields (`id`, the timestamps, unknown ones) are ignored: the store
 * assigns them. An empty string is a valid title or content, as in Pydantic.
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
 * The body of a partial update: a field left out or null keeps its value. The title obeys the
 * create's 100-character rule, so an update can never fail in the store. Pydantic's `default:
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

/**
 * Python's `datetime.isoformat()` of a naive UTC timestamp: no offset, the fraction left out when
 * zero.
 */
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

const NoteList: JsonSchema = { type: 'array', items: Note };

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

const { missing, capped, preconditioned, budgeted } = noteFailures(message, NOTE_NOT_FOUND);
const HEALTHY = json(200, { status: 'healthy' });
const DELETED = json(200, { message: NOTE_DELETED });

/**
 * The endpoints, answering as FastAPI does. Each handler reads its body before anything else:
 * FastAPI validates the whole request before the endpoint runs.
 */
export function noteRoutes(
  db: Database,
  { idempotencyTtlSeconds, writeBytesPerMinute }: NotesConfig,
) {
  const store = noteStore(db);
  const budget = new WriteBudget(writeBytesPerMinute);
  return [
    route(
      'GET /health',
      {
        summary: 'Health',
        description: 'Reports that the process is running.',
        responses: { 200: success(Health) },
      },
      () => HEALTHY,
    ),

    route(
      'GET /notes',
      {
        summary: 'List Notes',
        description: `All notes, newest \`id\` first; or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), one page of at most ${PAGE_LIMIT} and a Link to the next.`,
        query: ListQuery,
        responses: { 200: { ...success(NoteList), headers: NEXT_PAGE } },
      },
      (_ctx, { query }) => listAnswer(store, query),
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
        spend(budget, ctx, createdBytes([title, content], key));
        if (!key) return noteAnswer(201, await store.insert(title, content));
        return noteAnswer(201, [
          await createOnce(
            db,
            key,
            { title, content },
            idempotencyTtlSeconds,
            store.insertRecorded(title, content),
          ),
          CREATED_ETAG,
        ]);
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
      async (ctx, { params }) =>
        readAnswer(ctx, found(await store.find(params.note_id), NOTE_NOT_FOUND)),
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
        const changes: NoteChanges = {};
        if (title != null) changes.title = title;
        if (content != null) changes.content = content;
        spend(budget, ctx, textBytes(changes.title ?? '', changes.content ?? ''));
        return noteAnswer(
          200,
          written(await store.update(params.note_id, changes, ifMatch(ctx)), NOTE_NOT_FOUND),
        );
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
        written(await store.remove(params.note_id, ifMatch(ctx)), NOTE_NOT_FOUND);
        return DELETED;
      },
    ),
  ];
}
