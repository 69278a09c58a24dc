import * as yup from 'yup';
import { parsedBy } from '../shared/compiledCheck.js';
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
import { noBody } from '../shared/answer.js';
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
import { createdBytes, MAX_NOTE_ID, textBytes } from '../shared/safeWrites.js';
import { WriteBudget } from '../shared/writeBudget.js';
import { route, type JsonSchema } from '../shared/route.js';
import { noteStore } from './store.js';

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const TITLE_MAX_CHARS = 200;

/** Every failure's body: `{error: "…"}`. */
export const { schema: ErrorBody, outcome: failure } = messageAnswers('Error', 'error');

/** What a JSON value that is not an object is, for the error message. */
function describeJsonValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return ['number', 'string', 'boolean'].includes(typeof value) ? `a ${typeof value}` : 'that';
}

/**
 * The body of a create or an update. Any other field (`id`, `created_at`, unknown ones) is
 * ignored: the store assigns `id` and `created_at`. A `null` body counts as empty.
 */
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

/** A positive decimal integer (up to 16 digits: the largest id is 2^53 - 1), or NaN. */
const decimal = (raw: string) => (/^[0-9]{1,16}$/.test(raw) ? Number(raw) : Number.NaN);

/**
 * The `{id}` of a path: a positive decimal integer no larger than an id can be. Anything else
 * (`abc`, `1.5`, `-1`, `0`, `9007199254740992`) names no note: the service answers 404 for it.
 */
const NoteId = yup.object({
  id: parsedBy(yup.number(), decimal).integer().min(1).max(MAX_NOTE_ID).defined(),
});

/** `GET /notes`'s paging: both optional, each a positive decimal integer. */
const ListQuery = yup.object({
  limit: parsedBy(yup.number().typeError('limit must be a whole number'), decimal)
    .integer()
    .min(1)
    .max(PAGE_LIMIT)
    .optional(),
  before: parsedBy(yup.number().typeError('before must be a whole number'), decimal)
    .integer()
    .min(1)
    .max(MAX_NOTE_ID)
    .optional(),
});

/** A note as the API shows it. */
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
const notes = (description: string) => ({ description, schema: { type: 'array', items: Note } });

const { missing, capped, preconditioned, budgeted } = noteFailures(failure, NOTE_NOT_FOUND);
const DELETED = noBody(204);

export function noteRoutes(
  db: Database,
  { idempotencyTtlSeconds, writeBytesPerMinute }: NotesConfig,
) {
  const store = noteStore(db);
  const budget = new WriteBudget(writeBytesPerMinute);
  return [
    route(
      'GET /notes',
      {
        summary: 'List Notes',
        description: `Every note, newest \`id\` first; or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), one page of at most ${PAGE_LIMIT} and a Link to the next.`,
        query: ListQuery,
        responses: { 200: { ...notes('All notes, or one page of them'), headers: NEXT_PAGE } },
      },
      (_ctx, { query }) => listAnswer(store, query),
    ),

    route(
      'POST /notes',
      {
        summary: 'Create Note',
        body: NoteInput,
        headers: [IDEMPOTENCY_KEY],
        responses: {
          201: {
            ...note(
              'The stored note (or, for a retry with the same Idempotency-Key and body, the one stored the first time)',
            ),
            headers: ETAG_HEADER,
          },
          400: failure(
            'The Idempotency-Key is malformed, or was used with another body',
            new IdempotencyConflict().message,
          ),
          ...budgeted,
          ...capped,
        },
      },
      async (ctx, { body }) => {
        const key = idempotencyKey(ctx);
        const { title, body: text } = await body();
        const fields = { title, body: text ?? '' };
        spend(budget, ctx, createdBytes([fields.title, fields.body], key));
        if (!key) return noteAnswer(201, await store.insert(fields.title, fields.body));
        return noteAnswer(201, [
          await createOnce(
            db,
            key,
            fields,
            idempotencyTtlSeconds,
            store.insertRecorded(fields.title, fields.body),
          ),
          CREATED_ETAG,
        ]);
      },
    ),

    route(
      'GET /notes/{id}',
      {
        summary: 'Get Note',
        params: NoteId,
        headers: [IF_NONE_MATCH],
        responses: {
          200: { ...note('The note'), headers: ETAG_HEADER },
          304: { description: 'The copy If-None-Match names is current', headers: ETAG_HEADER },
          ...missing,
        },
      },
      async (ctx, { params }) =>
        readAnswer(ctx, found(await store.find(params.id), NOTE_NOT_FOUND)),
    ),

    route(
      'PUT /notes/{id}',
      {
        summary: 'Replace Note',
        description:
          'Replaces the title and the body; an omitted body becomes empty. A missing note is reported before an invalid body; with If-Match, a note changed since (or deleted) is 412 and nothing changes.',
        params: NoteId,
        body: NoteInput,
        headers: [IF_MATCH],
        responses: {
          200: { ...note('The note as replaced'), headers: ETAG_HEADER },
          ...missing,
          ...preconditioned,
          ...budgeted,
          ...capped,
        },
      },
      async (ctx, { params, body }) => {
        // A valid body goes straight to the UPDATE, which finds the note (or not: 404); only an
        // invalid one needs the lookup that tells a missing note (reported first) from a bad body.
        const { title, body: text } = await body().catch(async (error: unknown) => {
          found(await store.find(params.id), NOTE_NOT_FOUND);
          throw error;
        });
        spend(budget, ctx, textBytes(title, text ?? ''));
        return noteAnswer(
          200,
          written(await store.replace(params.id, title, text ?? '', ifMatch(ctx)), NOTE_NOT_FOUND),
        );
      },
    ),

    route(
      'DELETE /notes/{id}',
      {
        summary: 'Delete Note',
        params: NoteId,
        headers: [IF_MATCH],
        responses: { 204: { description: 'Deleted' }, ...missing, ...preconditioned },
      },
      async (ctx, { params }) => {
        written(await store.remove(params.id, ifMatch(ctx)), NOTE_NOT_FOUND);
        return DELETED;
      },
    ),
  ];
}
