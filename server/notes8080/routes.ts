import * as yup from 'yup';
import { parsedBy } from '../shared/compiledCheck.js';
import type { Database } from '../shared/database.js';
import type { NotesConfig } from '../shared/config.js';
import { found, insufficientStorage, notFound } from '../shared/errors.js';
import { createOnce, IDEMPOTENCY_KEY, IdempotencyConflict, idempotencyKey } from '../shared/idempotency.js';
import { maxChars, text } from '../shared/fields.js';
import { jsonText, noBody } from '../shared/answer.js';
import { arrayAnswer } from '../shared/jsonArray.js';
import { messageAnswers } from '../shared/openapi.js';
import { route, type JsonSchema } from '../shared/route.js';
import { noteStore } from './store.js';

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const TITLE_MAX_CHARS = 200;
/** The largest value of the `id` column (PostgreSQL `integer`). */
const MAX_ID = 2_147_483_647;

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

/**
 * The `{id}` of a path: a positive decimal integer within the column's range. Anything else
 * (`abc`, `1.5`, `-1`, `0`, `2147483648`) names no note: the service answers 404 for it.
 */
const NoteId = yup.object({
  id: parsedBy(yup.number(), (raw) => (/^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN))
    .integer()
    .min(1)
    .max(MAX_ID)
    .defined(),
});

/** A note as the API shows it. */
const Note: JsonSchema = {
  type: 'object',
  title: 'Note',
  properties: {
    id: { type: 'integer', minimum: 1 },
    title: { type: 'string', maxLength: TITLE_MAX_CHARS },
    body: { type: 'string' },
    created_at: { type: 'string', format: 'date-time', description: 'RFC 3339 in UTC with milliseconds', examples: ['2026-11-22T10:11:49.123Z'] },
  },
  required: ['id', 'title', 'body', 'created_at'],
};

const note = (description: string) => ({ description, schema: Note });
const notes = (description: string) => ({ description, schema: { type: 'array', items: Note } });

const missing = { 404: failure('No note has this id', NOTE_NOT_FOUND) };
const DELETED = noBody(204);
const capped = { 507: failure('The storage limit (NOTES_MAX_BYTES) would be passed: nothing was stored', insufficientStorage().message) };

export function noteRoutes(db: Database, { idempotencyTtlSeconds }: NotesConfig) {
  const store = noteStore(db);
  return [
    route('GET /notes', { summary: 'List Notes', description: 'Every note, newest `id` first.', responses: { 200: notes('All notes') } }, () => arrayAnswer(store.list())),

    route(
      'POST /notes',
      {
        summary: 'Create Note',
        body: NoteInput,
        headers: [IDEMPOTENCY_KEY],
        responses: {
          201: note('The stored note (or, for a retry with the same Idempotency-Key and body, the one stored the first time)'),
          400: failure('The Idempotency-Key is malformed, or was used with another body', new IdempotencyConflict().message),
          ...capped,
        },
      },
      async (ctx, { body }) => {
        const key = idempotencyKey(ctx);
        const { title, body: text } = await body();
        const fields = { title, body: text ?? '' };
        const note = key ? await createOnce(db, key, fields, idempotencyTtlSeconds, store.insertRecorded(fields.title, fields.body)) : await store.insert(fields.title, fields.body);
        return jsonText(201, note);
      },
    ),

    route('GET /notes/{id}', { summary: 'Get Note', params: NoteId, responses: { 200: note('The note'), ...missing } }, async (_ctx, { params }) =>
      jsonText(200, found(await store.find(params.id), NOTE_NOT_FOUND)),
    ),

    route(
      'PUT /notes/{id}',
      {
        summary: 'Replace Note',
        description: 'Replaces the title and the body; an omitted body becomes empty. A missing note is reported before an invalid body.',
        params: NoteId,
        body: NoteInput,
        responses: { 200: note('The note as replaced'), ...missing, ...capped },
      },
      async (_ctx, { params, body }) => {
        // A valid body goes straight to the UPDATE, which finds the note (or not: 404); only an
        // invalid one needs the lookup that tells a missing note (reported first) from a bad body.
        const { title, body: text } = await body().catch(async (error: unknown) => {
          found(await store.find(params.id), NOTE_NOT_FOUND);
          throw error;
        });
        return jsonText(200, found(await store.replace(params.id, title, text ?? ''), NOTE_NOT_FOUND));
      },
    ),

    route('DELETE /notes/{id}', { summary: 'Delete Note', params: NoteId, responses: { 204: { description: 'Deleted' }, ...missing } }, async (_ctx, { params }) => {
      if (!(await store.remove(params.id))) throw notFound(NOTE_NOT_FOUND);
      return DELETED;
    }),
  ];
}
