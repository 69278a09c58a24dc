import * as yup from 'yup';
import type { Database } from '../shared/database.js';
import { notFound } from '../shared/errors.js';
import { maxChars, text } from '../shared/fields.js';
import { jsonArray } from '../shared/jsonArray.js';
import { messageSchema } from '../shared/openapi.js';
import { route, type JsonSchema } from '../shared/route.js';
import { noteStore, type NoteRow } from './store.js';

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const TITLE_MAX_CHARS = 200;
/** The largest value of the `id` column (PostgreSQL `integer`). */
const MAX_ID = 2_147_483_647;

/** Every failure's body: `{error: "…"}`. */
export const ErrorBody = messageSchema('Error', 'error');

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
  id: yup
    .number()
    .transform((_, raw: string) => (/^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN))
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

function presentNote(row: NoteRow) {
  return { id: row.id, title: row.title, body: row.body, created_at: row.created_at.toISOString() };
}

const missing = { 404: { description: 'No note has this id', schema: ErrorBody, example: { error: NOTE_NOT_FOUND } } };

function found(note: NoteRow | undefined): NoteRow {
  if (!note) throw notFound(NOTE_NOT_FOUND);
  return note;
}

export function noteRoutes(db: Database) {
  const store = noteStore(db);
  return [
    route({
      method: 'get',
      path: '/notes',
      summary: 'List Notes',
      description: 'Every note, newest `id` first.',
      responses: { 200: { description: 'All notes', schema: { type: 'array', items: Note } } },
      async handler(ctx) {
        ctx.type = 'json';
        ctx.body = await jsonArray(store.list(), presentNote);
      },
    }),

    route({
      method: 'post',
      path: '/notes',
      summary: 'Create Note',
      body: NoteInput,
      responses: { 201: { description: 'The stored note', schema: Note } },
      async handler(ctx, { body }) {
        const { title, body: text } = await body();
        ctx.status = 201;
        ctx.body = presentNote(await store.insert({ title, body: text ?? '' }));
      },
    }),

    route({
      method: 'get',
      path: '/notes/{id}',
      summary: 'Get Note',
      params: NoteId,
      responses: { 200: { description: 'The note', schema: Note }, ...missing },
      async handler(ctx, { params }) {
        ctx.body = presentNote(found(await store.find(params.id)));
      },
    }),

    route({
      method: 'put',
      path: '/notes/{id}',
      summary: 'Replace Note',
      description: 'Replaces the title and the body; an omitted body becomes empty. A missing note is reported before an invalid body.',
      params: NoteId,
      body: NoteInput,
      responses: { 200: { description: 'The note as replaced', schema: Note }, ...missing },
      async handler(ctx, { params, body }) {
        found(await store.find(params.id));
        const { title, body: text } = await body();
        // The note can be deleted meanwhile: that is a 404 too.
        ctx.body = presentNote(found(await store.replace(params.id, { title, body: text ?? '' })));
      },
    }),

    route({
      method: 'delete',
      path: '/notes/{id}',
      summary: 'Delete Note',
      params: NoteId,
      responses: { 204: { description: 'Deleted' }, ...missing },
      async handler(ctx, { params }) {
        if (!(await store.remove(params.id))) throw notFound(NOTE_NOT_FOUND);
        ctx.status = 204;
      },
    }),
  ];
}
