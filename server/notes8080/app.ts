import { Router } from '@koa/router';
import Koa from 'koa';
import { readBody } from '../shared/body.js';
import { logFailuresAfterAnswer } from '../shared/errorMiddleware.js';
import type { Database } from '../shared/database.js';
import { requestLogger, type Logger } from '../shared/logger.js';
import { validate } from '../shared/validate.js';
import { bodiesForRoutingErrors, handleNotesErrors } from './errors.js';
import { noteHandlers, type NotesState } from './handlers.js';
import { NoteInput } from './schema.js';

export interface Notes8080Deps {
  db: Database;
  bodyLimitBytes: number;
  logger: Logger;
}

/** The notes service of notes-service-8080.md: CRUD on `/notes`, `{error}` bodies on failure. */
export function createApp({ db, bodyLimitBytes, logger }: Notes8080Deps): Koa {
  const notes = noteHandlers(db);
  const body = readBody({ limitBytes: bodyLimitBytes });
  const router = new Router<NotesState>();

  router
    .get('/notes', notes.index)
    .post('/notes', body, validate(NoteInput), notes.create)
    .get('/notes/:id', notes.loadNote, notes.show)
    // Update looks the note up before reading the body (spec rule 3).
    .put('/notes/:id', notes.loadNote, body, validate(NoteInput), notes.update)
    .delete('/notes/:id', notes.remove);

  const app = new Koa();
  logFailuresAfterAnswer(app, logger);
  app.use(requestLogger(logger));
  app.use(handleNotesErrors(logger));
  app.use(bodiesForRoutingErrors);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
