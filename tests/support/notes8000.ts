import { afterAll, beforeAll, expect } from 'vitest';
import type { Request } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { notes8000 } from '../../server/services.js';
import { loadConfig } from '../../server/config.js';
import type { NotesDeps } from '../../server/services.js';
import { startTestService } from './services.js';

export const SCHEMA = notes8000.database!.schema;
export const BODY_LIMIT = loadConfig({}).notes.bodyLimitBytes;
export const deps = { config: loadConfig({}).notes };
const JSON_TYPE = 'application/json';

/**
 * ISO 8601 without offset, with six fraction digits unless the fraction is zero (Python's
 * isoformat).
 */
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/;
export const NOT_FOUND = { detail: 'ノートが見つかりません' };

export interface Note {
  id: number;
  title: string;
  content: string;
  created_at: string;
  updated_at: string;
}

export type Service = StartedService<NotesDeps>;
export type Options = Omit<Request, 'method' | 'path'>;

/** Text sent as it is, with `contentType` (none when null). */
export const raw = (body: string, contentType: string | null = JSON_TYPE): Options => ({
  body,
  ...(contentType !== null && { headers: { 'content-type': contentType } }),
});

/**
 * The 8000 notes service (notes-service-8000.md) of a test file, answering as FastAPI does, over
 * HTTP, on a scratch database of its own: started before the file's tests, closed after them.
 * Every answer is also checked against the service's own OpenAPI document (service.request).
 */
export function useNotes8000() {
  let service: Service;

  beforeAll(async () => {
    service = await startTestService(notes8000, { deps });
  });

  afterAll(async () => {
    await service?.close();
  });

  const call = (method: string, path: string, options?: Options) =>
    service.request(method, path, options);

  async function createNote(title = 'a title', content = 'some content'): Promise<Note> {
    const answer = await call('POST', '/notes', { json: { title, content } });
    expect(answer.status).toBe(201);
    return answer.json as Note;
  }

  /** The note as the store holds it, timestamps in the same text form the API uses. */
  async function storedTimestamps(
    id: number,
  ): Promise<{ created_at: string; updated_at: string } | undefined> {
    const format = `'YYYY-MM-DD"T"HH24:MI:SS.US'`;
    const { rows } = await service.db.query<{ created_at: string; updated_at: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', ${format}) AS created_at,
              to_char(updated_at AT TIME ZONE 'UTC', ${format}) AS updated_at
       FROM notes WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async function noteCount(): Promise<number> {
    const { rows } = await service.db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM notes',
    );
    return rows[0]!.count;
  }

  return { service: () => service, call, createNote, storedTimestamps, noteCount };
}
