import { Router } from '@koa/router';
import Koa from 'koa';
import { readBody } from '../shared/body.js';
import { logFailuresAfterAnswer } from '../shared/errorMiddleware.js';
import type { Database } from '../shared/database.js';
import { requestLogger, type Logger } from '../shared/logger.js';
import { docsAsset, docsInitializer, docsPage } from './docs.js';
import { handleNotesErrors } from './errors.js';
import { noteHandlers } from './handlers.js';
import { openApiDocument } from './openapi.js';
import { validateRequest, type NotesState } from './request.js';
import { unmatchedRequests } from './routing.js';
import { NoteCreate, NoteUpdate } from './schema.js';

export interface Notes8000Deps {
  db: Database;
  bodyLimitBytes: number;
  logger: Logger;
}

/**
 * The notes service of notes-service-8000.md, answering as FastAPI does: `{detail}` bodies,
 * 422 validation failures in Pydantic's shape, the OpenAPI document and Swagger UI at `/docs`.
 */
export function createApp({ db, bodyLimitBytes, logger }: Notes8000Deps): Koa {
  const notes = noteHandlers(db);
  const body = readBody({ limitBytes: bodyLimitBytes });
  const openApi = openApiDocument();
  // Strict: `/notes/` is not `/notes` (it is redirected, as Starlette does).
  const router = new Router<NotesState>({ strict: true });

  router
    .get('/health', notes.health)
    .get('/notes', notes.index)
    .post('/notes', body, validateRequest(NoteCreate), notes.create)
    .get('/notes/:note_id', validateRequest(), notes.show)
    // The body and the id are validated before the note is looked up (FastAPI's order).
    .put('/notes/:note_id', body, validateRequest(NoteUpdate), notes.update)
    .delete('/notes/:note_id', validateRequest(), notes.remove)
    .get('/openapi.json', (ctx) => {
      ctx.body = openApi;
    })
    .get('/docs', docsPage)
    .get('/docs/swagger-initializer.js', docsInitializer)
    .get('/docs/:asset', docsAsset);

  const app = new Koa();
  logFailuresAfterAnswer(app, logger);
  app.use(requestLogger(logger));
  app.use(handleNotesErrors(logger));
  app.use(router.routes());
  app.use(unmatchedRequests(router));
  return app;
}
