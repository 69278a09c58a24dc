import type { Context } from 'koa';
import type { Edge, NotesConfig } from '../config.js';
import type { Database } from '../db/pool.js';
import { serviceApp, type Hosting, type ServiceOptions } from '../http/app.js';
import { clientKey } from '../http/clientAddress.js';
import { httpError, notFound } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { idempotencyKey, idempotentCreates } from './idempotency.js';
import { noteLists } from './list.js';
import { ifMatch, isCurrent, type Condition } from './preconditions.js';
import { MAX_NOTE_ID, noteTable, storedBytes, type NoteJson, type NoteSql } from './table.js';
import { createdBytes, writeBudget } from './writeBudget.js';

/** What a notes service is given: its pool (on its own schema), its settings and its edge. */
export interface NotesDeps extends Hosting {
  db: Database;
  logger: Logger;
  config: NotesConfig;
  edge: Edge;
}

export const NOTE_NOT_FOUND = 'ノートが見つかりません';
export const PAGE_LIMIT = 1000;
export const PRECONDITION_FAILED =
  'The note has changed (or was deleted) since the version If-Match names: nothing was changed';

/** An id no note can have is not sent to PostgreSQL, which would refuse it. */
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

/** What both notes services answer alike, on the service's `notes` table. */
export function notesService({ db, logger, config, edge, ...hosting }: NotesDeps, sql: NoteSql) {
  const table = noteTable(db, sql);
  const chargeBudget = writeBudget(config.writeBytesPerMinute);
  const createOnce = idempotentCreates(db, config.idempotencyTtlSeconds);
  hosting.metrics?.storage(sql.service, () => storedBytes(db), config.maxBytes);

  return {
    find: table.find,
    list: noteLists(db, sql),

    /** Creates the note `read` gives, once per Idempotency-Key. */
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

    /** The note; 304 without a body when If-None-Match names it as it is. */
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
      const condition = ifMatch(ctx);
      const note = texts
        ? await table.update(id, texts, condition)
        : await table.find(id, condition);
      sendNote(ctx, 200, note ?? missing(condition));
    },

    async remove(ctx: Context, id: number) {
      const condition = ifMatch(ctx);
      if (!(await table.remove(storableId(id), condition))) missing(condition);
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
