import type Koa from 'koa';
import * as notes8000App from '../server/notes8000/app.js';
import * as notes8000Database from '../server/notes8000/database.js';
import * as notes8080App from '../server/notes8080/app.js';
import * as notes8080Database from '../server/notes8080/database.js';
import type { Database } from '../server/shared/database.js';
import type { Logger } from '../server/shared/logger.js';
import type { ServiceUrls } from './services.js';

/** What the benchmark needs to know about each notes service: where it is and what a note looks like. */
export interface NotesService {
  name: 'notes-8080' | 'notes-8000';
  urlKey: keyof ServiceUrls;
  schema: string;
  /** The column (and JSON field) holding a note's text. */
  textField: 'body' | 'content';
  createApp(deps: { db: Database; bodyLimitBytes: number; logger: Logger }): Koa;
}

export const NOTES_SERVICES: NotesService[] = [
  { name: 'notes-8080', urlKey: 'notes8080', schema: notes8080Database.SCHEMA, textField: 'body', createApp: notes8080App.createApp },
  { name: 'notes-8000', urlKey: 'notes8000', schema: notes8000Database.SCHEMA, textField: 'content', createApp: notes8000App.createApp },
];

/** A note of a typical size: a short title and a paragraph of text. */
export const NOTE_TITLE = 'Benchmark note';
/** The title every update sends. */
export const EDITED_TITLE = 'Benchmark note, edited';
export const NOTE_TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris.';

export function noteJson(service: NotesService, title = NOTE_TITLE): string {
  return JSON.stringify({ title, [service.textField]: NOTE_TEXT });
}
