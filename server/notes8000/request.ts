import type { RouterMiddleware } from '@koa/router';
import type { DefaultState } from 'koa';
import type * as yup from 'yup';
import { InvalidBodyError, validate } from '../shared/validate.js';
import { parseNoteId } from './noteId.js';
import { bodyEntries, pathIntegerEntry, RequestValidationError, type ErrorEntry } from './validationErrors.js';

export interface NotesState extends DefaultState {
  /** The `{note_id}` of the path, once validated. */
  noteId: number;
}

/**
 * FastAPI's request validation, before any handler or lookup runs: the path's `note_id` and
 * the body (against `body`) are checked together and every failure is reported at once, path
 * first. Malformed JSON never gets here: `readBody` rejects it first, alone, as FastAPI does.
 */
export function validateRequest(body?: yup.ObjectSchema<yup.AnyObject>): RouterMiddleware<NotesState> {
  return async (ctx, next) => {
    const entries: ErrorEntry[] = [];
    const rawId = ctx.params.note_id;
    if (rawId !== undefined) {
      const parsed = parseNoteId(rawId);
      if ('id' in parsed) ctx.state.noteId = parsed.id;
      else entries.push(pathIntegerEntry('note_id', rawId, parsed.failure));
    }
    if (body) {
      try {
        await validate(body)(ctx, async () => undefined);
      } catch (error) {
        if (!(error instanceof InvalidBodyError)) throw error;
        entries.push(...bodyEntries(error, body));
      }
    }
    if (entries.length > 0) throw new RequestValidationError(entries);
    await next();
  };
}
