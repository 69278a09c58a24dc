import type { RouterMiddleware } from '@koa/router';
import type { Database } from '../shared/database.js';
import { notFound } from '../shared/errors.js';
import { jsonArray } from '../shared/jsonArray.js';
import { messages } from './messages.js';
import { presentNote } from './presenter.js';
import type { NotesState } from './request.js';
import type { NoteCreate, NoteUpdate } from './schema.js';
import { noteStore, type NoteChanges, type NoteRow } from './store.js';

type Handler = RouterMiddleware<NotesState>;

function found(row: NoteRow | undefined): NoteRow {
  if (!row) throw notFound(messages.noteNotFound);
  return row;
}

/** The endpoints' own work, once `validateRequest` has accepted the path id and the body. */
export function noteHandlers(db: Database) {
  const store = noteStore(db);

  const health: Handler = (ctx) => {
    ctx.body = { status: messages.healthy };
  };

  const index: Handler = async (ctx) => {
    ctx.type = 'json';
    ctx.body = await jsonArray(store.list(), presentNote);
  };

  const create: Handler = async (ctx) => {
    const { title, content } = ctx.state.input as NoteCreate;
    ctx.status = 201;
    ctx.body = presentNote(await store.create({ title, content }));
  };

  const show: Handler = async (ctx) => {
    ctx.body = presentNote(found(await store.find(ctx.state.noteId)));
  };

  const update: Handler = async (ctx) => {
    const { title, content } = ctx.state.input as NoteUpdate;
    // Only fields sent with a value replace the stored ones (null means "keep").
    const changes: NoteChanges = {};
    if (title != null) changes.title = title;
    if (content != null) changes.content = content;
    ctx.body = presentNote(found(await store.update(ctx.state.noteId, changes)));
  };

  const remove: Handler = async (ctx) => {
    if (!(await store.remove(ctx.state.noteId))) throw notFound(messages.noteNotFound);
    ctx.body = { message: messages.noteDeleted };
  };

  return { health, index, create, show, update, remove };
}
