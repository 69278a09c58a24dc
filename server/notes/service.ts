import type { Context } from 'koa';
import type { Edge, NotesConfig } from '../config.js';
import type { Database } from '../db/pool.js';
import { serviceApp, type Hosting, type ServiceOptions } from '../http/app.js';
import { clientKey } from '../http/clientAddress.js';
import { httpError, notFound } from '../http/errors.js';
import type { HeaderParameter, Outcome, Outcomes } from '../http/route.js';
import type { Logger } from '../logger.js';
import { IDEMPOTENCY_KEY, idempotencyKey, idempotentCreates } from './idempotency.js';
import { noteLists } from './list.js';
import {
  MAX_NOTE_ID,
  noteTable,
  STORAGE_FULL,
  storedBytes,
  type Condition,
  type NoteJson,
  type NoteSql,
} from './table.js';
import { createdBytes, overBudget, writeBudget } from './writeBudget.js';

export interface NotesDeps extends Hosting {
  db: Database;
  logger: Logger;
  config: NotesConfig;
  edge: Edge;
}

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const PAGE_LIMIT = 1000;
const PRECONDITION_FAILED =
  'The note has changed (or was deleted) since the version If-Match names: nothing was changed';

const TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
// RFC 9110's list syntax: tags separated by commas, empty elements allowed.
const TAG_LIST = new RegExp(`^[ \\t]*(?:${TAG}[ \\t]*)?(?:,[ \\t]*(?:${TAG}[ \\t]*)?)*$`);

/** What If-Match or If-None-Match asks; a header of any other form names no tag. */
function condition(value: string): Condition | undefined {
  if (value.trim() === '') return undefined;
  if (value.trim() === '*') return 'any';
  return TAG_LIST.test(value) ? (value.match(new RegExp(TAG, 'g')) ?? []) : [];
}

/** Whether If-None-Match names the current note (weak comparison: `W/` aside). */
function isCurrent(ctx: Context, etag: string): boolean {
  const wanted = condition(ctx.get('if-none-match'));
  return wanted === 'any' || (wanted?.some((tag) => tag.replace(/^W\//, '') === etag) ?? false);
}

/** An id no note can have is not sent to PostgreSQL, which would refuse it (8000's ids). */
function storableId(id: number): number {
  if (Number.isSafeInteger(id) && id >= 1 && id <= MAX_NOTE_ID) return id;
  throw notFound(NOTE_NOT_FOUND);
}

/** No note of the version If-Match names: 412 when it named versions (deleted: changed), or 404. */
function missing(condition: Condition | undefined): never {
  if (Array.isArray(condition)) throw httpError(412, PRECONDITION_FAILED);
  throw notFound(NOTE_NOT_FOUND);
}

function sendNote(ctx: Context, status: number, note: NoteJson): void {
  ctx.status = status;
  ctx.type = 'json';
  ctx.body = note.json;
  ctx.set('ETag', note.etag);
}

export function notesService({ db, logger, config, edge, ...hosting }: NotesDeps, sql: NoteSql) {
  const table = noteTable(db, sql);
  const chargeBudget = writeBudget(config.writeBytesPerMinute);
  const createOnce = idempotentCreates(db, config.idempotencyTtlSeconds);
  hosting.metrics?.storage(sql.service, () => storedBytes(db), config.maxBytes);

  return {
    find: table.find,
    list: noteLists(db, sql),

    async create(ctx: Context, read: () => Promise<[title: string, text: string]>) {
      const key = idempotencyKey(ctx);
      const [title, text] = await read();
      const client = clientKey(ctx.ip);
      await chargeBudget(client, createdBytes([title, text], key ? { client, key } : undefined));
      if (!key) return sendNote(ctx, 201, await table.insert(title, text));
      const input = { title, [sql.textColumn]: text };
      const json = await createOnce(client, key, input, (keyed) =>
        table.insert(title, text, keyed),
      );
      sendNote(ctx, 201, { json, etag: '"1"' });
    },

    async read(ctx: Context, id: number) {
      const note = (await table.find(storableId(id))) ?? missing(undefined);
      if (!isCurrent(ctx, note.etag)) return sendNote(ctx, 200, note);
      ctx.status = 304;
      ctx.set('ETag', note.etag);
    },

    /** The note with `texts` written (none: as it is), `bytes` charged, if If-Match holds. */
    async update(ctx: Context, id: number, bytes: number, texts?: unknown[]) {
      storableId(id);
      await chargeBudget(clientKey(ctx.ip), bytes);
      // Compared strongly: a weak tag never matches a write.
      const wanted = condition(ctx.get('if-match'));
      const note = texts ? await table.update(id, texts, wanted) : await table.find(id, wanted);
      sendNote(ctx, 200, note ?? missing(wanted));
    },

    async remove(ctx: Context, id: number) {
      const wanted = condition(ctx.get('if-match'));
      if (!(await table.remove(storableId(id), wanted))) missing(wanted);
    },

    app: (own: Pick<ServiceOptions, 'contract' | 'routes' | 'shape' | 'redirectTrailingSlash'>) =>
      serviceApp({
        name: sql.service,
        ...own,
        logger,
        edge,
        bodyLimitBytes: config.bodyLimitBytes,
        ready: () => db.query('SELECT 1'),
        ...hosting,
      }),
  };
}

const text = (description: string) => ({ description, schema: { type: 'string' } });
const header = (name: string, description: string): HeaderParameter => ({
  name,
  in: 'header',
  required: false,
  ...text(description),
});

const IF_MATCH = header(
  'If-Match',
  'The ETag of the note as the client last read it (or `*`, any current note): ' +
    'the write happens only if the note is still that version, checked in the same statement; ' +
    'otherwise 412 and nothing changes.',
);
const IF_NONE_MATCH = header(
  'If-None-Match',
  'ETags of copies the client holds (or `*`): ' +
    'when one is the current note, the answer is 304 with no body.',
);
const ETAG = {
  ETag: text("The note's version as a strong entity tag; it changes with every change of the note"),
};

export const withETag = (outcome: Outcome) => ({ ...outcome, headers: ETAG });

/** What both services document of their operations on notes, failures in their own shape. */
export function noteOperations(failure: (description: string, example: string) => Outcome) {
  const refusal = (description: string, example: string, retryAfter: string) => ({
    ...failure(description, example),
    headers: { 'Retry-After': { description: retryAfter, schema: { type: 'integer' } } },
  });
  const missing = { 404: failure('No note has this id', NOTE_NOT_FOUND) };
  const preconditioned = {
    412: failure(
      'If-Match names a version the note no longer has (or the note was deleted): ' +
        'nothing was changed',
      PRECONDITION_FAILED,
    ),
  };
  const stored = {
    429: refusal(
      'This client address has stored its NOTES_WRITE_BYTES_PER_MINUTE: nothing was stored',
      overBudget(12),
      'Seconds until the write fits the budget again',
    ),
    507: failure(
      'The storage limit (NOTES_MAX_BYTES) would be passed: nothing was stored',
      STORAGE_FULL,
    ),
  };
  return {
    list: (notes: string, page: Outcome) => ({
      summary: 'List Notes',
      description:
        `${notes}, newest \`id\` first; ` +
        `or, with \`limit\` (and \`before\`: the \`id\` the previous page ended at), ` +
        `one page of at most ${PAGE_LIMIT} and a Link to the next.`,
      responses: {
        200: {
          ...page,
          headers: {
            Link: text(
              'With `limit`, while older notes remain: `</notes?limit=N&before=ID>; rel="next"`',
            ),
          },
        },
        429: refusal(
          'This client address streams two full lists already',
          'This address reads 2 lists already: try again in 1 s',
          'Seconds to wait',
        ),
      },
    }),
    create: (responses: Outcomes) => ({
      summary: 'Create Note',
      headers: [IDEMPOTENCY_KEY],
      responses: { ...responses, ...stored },
    }),
    read: (note: Outcome) => ({
      summary: 'Get Note',
      headers: [IF_NONE_MATCH],
      responses: {
        200: withETag(note),
        304: withETag({ description: 'The copy If-None-Match names is current' }),
        ...missing,
      },
    }),
    update: (summary: string, description: string, note: Outcome) => ({
      summary,
      description,
      headers: [IF_MATCH],
      responses: { 200: withETag(note), ...missing, ...preconditioned, ...stored },
    }),
    remove: (deleted: Outcomes) => ({
      summary: 'Delete Note',
      headers: [IF_MATCH],
      responses: { ...deleted, ...missing, ...preconditioned },
    }),
  };
}
