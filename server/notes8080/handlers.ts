import type { RouterMiddleware } from '@koa/router';
import type { DefaultState } from 'koa';
import type { Database } from '../shared/database.js';
import { notFound } from '../shared/errors.js';
import { jsonArray } from '../shared/jsonArray.js';
import { messages } from './messages.js';
import { parseNoteId } from './noteId.js';
import { presentNote } from './presenter.js';
import type { NoteInput } from './schema.js';
import { deleteNote, findNote, insertNote, listNotes, replaceNote, type NoteFields, type NoteRow } from './store.js';

export interface NotesState extends DefaultState {
  /** The note named by the path, once `loadNote` found it. */
  note?: NoteRow;
}

type Handler = RouterMiddleware<NotesState>;

const noteNotFound = () => notFound(messages.noteNotFound);

/** The validated body as the columns it replaces: an omitted or null `body` is empty. */
function fieldsOf(input: unknown): NoteFields {
  const { title, body } = input as NoteInput;
  return { title, body: body ?? '' };
}

function pathId(params: Record<string, string>): number {
  const id = parseNoteId(params.id ?? '');
  if (id === undefined) throw noteNotFound();
  return id;
}

export function noteHandlers(db: Database) {
  const index: Handler = async (ctx) => {
    ctx.type = 'json';
    ctx.body = await jsonArray(listNotes(db), presentNote);
  };

  const create: Handler = async (ctx) => {
    ctx.status = 201;
    ctx.body = presentNote(await insertNote(db, fieldsOf(ctx.state.input)));
  };

  /** Looks the note up before anything else: a missing note is a 404 whatever the body. */
  const loadNote: Handler = async (ctx, next) => {
    const note = await findNote(db, pathId(ctx.params));
    if (!note) throw noteNotFound();
    ctx.state.note = note;
    await next();
  };

  const show: Handler = (ctx) => {
    ctx.body = presentNote(ctx.state.note!);
  };

  const update: Handler = async (ctx) => {
    // The note can be deleted between `loadNote` and here: that is a 404 too.
    const row = await replaceNote(db, ctx.state.note!.id, fieldsOf(ctx.state.input));
    if (!row) throw noteNotFound();
    ctx.body = presentNote(row);
  };

  const remove: Handler = async (ctx) => {
    if (!(await deleteNote(db, pathId(ctx.params)))) throw noteNotFound();
    ctx.status = 204;
  };

  return { index, create, loadNote, show, update, remove };
}
