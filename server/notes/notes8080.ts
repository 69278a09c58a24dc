import * as yup from 'yup';
import type { NotesConfig } from '../config.js';
import type { Database } from '../db/pool.js';
import { serviceApp, type ErrorAnswer, type Hosting } from '../http/app.js';
import { describeServerError, found, HttpError, MalformedJsonError } from '../http/errors.js';
import { messageOutcomes, type Contract } from '../http/openapi.js';
import { InvalidRequestError, route, type JsonSchema } from '../http/route.js';
import type { Logger } from '../logger.js';
import type { Edge } from '../config.js';
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
import { ETAG_HEADER, IF_MATCH, IF_NONE_MATCH, ifMatch } from './preconditions.js';
import { MAX_NOTE_ID, noteTable, storedBytes, versionIn } from './table.js';
import { createdBytes, textBytes, WriteBudget } from './writeBudget.js';
import { clientKey } from '../http/clientAddress.js';

/** What a notes service is given: its pool (on its own schema), its settings and its edge. */
export interface NotesDeps extends Hosting {
  db: Database;
  logger: Logger;
  config: NotesConfig;
  edge: Edge;
}

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const TITLE_MAX_CHARS = 200;

/** Every failure's body: `{error: "…"}`. */
export const { schema: ErrorBody, outcome: failure } = messageOutcomes('Error', 'error');

/** What a JSON value that is not an object is, for the error message. */
function describeJsonValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return ['number', 'string', 'boolean'].includes(typeof value) ? `a ${typeof value}` : 'that';
}

/**
 * The body of a create or an update. Any other field (`id`, `created_at`, unknown ones) is
 * ignored: the store assigns `id` and `created_at`.
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

/** A positive decimal integer of at most 16 digits, or NaN. */
const decimal = (raw: unknown) =>
  typeof raw === 'string' && /^[0-9]{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
const wholeNumber = (name: string) =>
  yup
    .number()
    .typeError(`${name} must be a whole number`)
    .transform((_value, raw) => decimal(raw));

/**
 * The `{id}` of a path: anything but a positive integer no larger than an id names no note (404).
 */
const NoteId = yup.object({ id: wholeNumber('id').integer().min(1).max(MAX_NOTE_ID).defined() });

/** `GET /notes`'s paging: both optional, each a positive decimal integer. */
const ListQuery = yup.object({
  limit: wholeNumber('limit').integer().min(1).max(PAGE_LIMIT).optional(),
  before: wholeNumber('before').integer().min(1).max(MAX_NOTE_ID).optional(),
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
const { missing, capped, preconditioned, budgeted, listed } = noteFailures(failure, NOTE_NOT_FOUND);

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
    if (!error.body) return answer(404, NOTE_NOT_FOUND);
    const { received, validation } = error.body;
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
  if (error instanceof HttpError) return answer(error.status, error.message, error.headers);
  return answer(500, describeServerError(error));
}

/** A note as the API shows it: `created_at` as RFC 3339 in UTC with the column's milliseconds. */
const PRESENTED = `id, title, body, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** The notes service of docs/specs/notes-service-8080.md: CRUD on `/notes`, `{error}` bodies. */
export function notes8080App({ db, logger, config, edge, ...hosting }: NotesDeps) {
  const shapeOfTable = { service: 'notes8080', textColumn: 'body', presented: PRESENTED } as const;
  const table = noteTable(db, shapeOfTable);
  const list = noteLists(db, shapeOfTable);
  const budget = new WriteBudget(config.writeBytesPerMinute);
  const createOnce = idempotentCreates(db, config.idempotencyTtlSeconds);
  // The version moves only when the note does: replacing it with what it holds keeps its ETag.
  const replace = table.statement(
    'replace',
    `WITH replaced AS (
      UPDATE notes SET title = $2::text, body = $3::text,
        version = version + CASE WHEN (title::text, body) IS DISTINCT FROM ($2::text, $3::text) THEN 1 ELSE 0 END
      WHERE id = $1 AND ${versionIn(4)} RETURNING *
    ) ${table.rendered('replaced')}`,
  );
  hosting.metrics?.storage('notes8080', () => storedBytes(db), config.maxBytes);

  const routes = [
    route(
      'GET /notes',
      {
        summary: 'List Notes',
        description: `Every note, newest \`id\` first; or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), one page of at most ${PAGE_LIMIT} and a Link to the next.`,
        query: ListQuery,
        responses: {
          200: {
            description: 'All notes, or one page of them',
            schema: { type: 'array', items: Note },
            headers: NEXT_PAGE,
          },
          ...listed,
        },
      },
      (ctx, { query }) => sendList(ctx, table, list, query),
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
        const input = await body();
        const [title, text] = [input.title, input.body ?? ''];
        const client = clientKey(ctx.ip);
        spend(
          budget,
          client,
          createdBytes([title, text], key === undefined ? undefined : { client, key }),
        );
        if (!key) return sendNote(ctx, 201, await table.insert(title, text));
        const json = await createOnce(client, key, { title, body: text }, (keyed) =>
          table.insertKeyed(title, text, keyed),
        );
        // A created note's first version.
        sendNote(ctx, 201, { json, etag: '"1"' });
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
      async (ctx, { params }) => sendRead(ctx, found(await table.find(params.id), NOTE_NOT_FOUND)),
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
          found(await table.find(params.id), NOTE_NOT_FOUND);
          throw error;
        });
        spend(budget, clientKey(ctx.ip), textBytes(title, text ?? ''));
        sendNote(
          ctx,
          200,
          written(
            await table.update(replace, params.id, [title, text ?? ''], ifMatch(ctx)),
            NOTE_NOT_FOUND,
          ),
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
        written(await table.remove(params.id, ifMatch(ctx)), NOTE_NOT_FOUND);
        ctx.status = 204;
      },
    ),
  ];

  return serviceApp({
    name: 'notes8080',
    contract,
    routes,
    shape,
    logger,
    edge,
    bodyLimitBytes: config.bodyLimitBytes,
    ready: () => db.query('SELECT 1'),
    ...hosting,
  });
}
