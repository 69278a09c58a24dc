import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Request } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { notes8080 } from '../../server/services.js';
import { loadConfig } from '../../server/config.js';
import type { NotesDeps } from '../../server/services.js';
import { startTestService } from './services.js';

export interface Note {
  id: number;
  title: string;
  body: string;
  created_at: string;
}

export type Service = StartedService<NotesDeps>;
export type Options = Omit<Request, 'method' | 'path'>;

export const NOT_FOUND = { error: 'ノートが見つかりません' };
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const JSON_TYPE = /^application\/json/;
export const BODY_LIMIT = loadConfig({}).notes.bodyLimitBytes;
export const deps = { config: loadConfig({}).notes };

/** Raw JSON text, sent as it is with a JSON content type. */
export const jsonText = (body: string, contentType = 'application/json'): Options => ({
  body,
  headers: { 'content-type': contentType },
});

export async function createOn(service: Service, input: unknown): Promise<Note> {
  const response = await service.request('POST', '/notes', { json: input });
  expect(response.status).toBe(201);
  return response.json as Note;
}

/**
 * The 8080 notes service (notes-service-8080.md) of a test file, over HTTP, on a scratch
 * database of its own: started before the file's tests, closed after them, its log cleared
 * before each. Every answer is also checked against the service's own OpenAPI document
 * (service.request).
 */
export function useNotes8080() {
  let service: Service;

  beforeAll(async () => {
    service = await startTestService(notes8080, { deps });
  });

  afterAll(async () => {
    await service?.close();
  });

  beforeEach(() => {
    service.logs.clear();
  });

  const call = (method: string, path: string, options?: Options) =>
    service.request(method, path, options);
  return {
    service: () => service,
    call,
    create: (input: unknown) => createOn(service, input),
    storedNotes: async () => (await call('GET', '/notes')).json as Note[],
  };
}
