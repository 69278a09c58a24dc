import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Reply, Request } from '../../harness/http.js';
import type { StartedService, StartOptions } from '../../harness/service.js';
import { loadConfig } from '../../server/config.js';
import { notes8000, notes8080, type NotesDeps, type Service } from '../../server/services.js';
import { startTestService } from './services.js';

export type NotesService = StartedService<NotesDeps>;
export type Options = Omit<Request, 'method' | 'path'>;

export const config = loadConfig({}).notes;
export const BODY_LIMIT = config.bodyLimitBytes;
export const JSON_TYPE = /^application\/json/;
/** An answer's status and body, to compare both at once, exactly. */
export const statusAndBody = (answer: Reply) => [answer.status, answer.json];

/** Text sent as it is, with `contentType` (none when null). */
export const raw = (body: string, contentType: string | null = 'application/json'): Options => ({
  body,
  ...(contentType !== null && { headers: { 'content-type': contentType } }),
});

/**
 * A notes service of a test file (or of a describe block), over HTTP, on a scratch database of
 * its own: started before its tests, its log cleared before each, closed after them. Every answer
 * is also checked against the service's own OpenAPI document (service.request).
 */
export function useNotesService(
  descriptor: Service<NotesDeps>,
  options: Partial<StartOptions<NotesDeps>> = {},
) {
  return useNotesServices(descriptor, options)[0];
}

/** Several of one service, each with its options, as useNotesService; started side by side. */
export function useNotesServices<Variants extends Partial<StartOptions<NotesDeps>>[]>(
  descriptor: Service<NotesDeps>,
  ...variants: Variants
): { [Index in keyof Variants]: NotesClient } {
  const services: NotesService[] = [];
  beforeAll(async () => {
    const starting = variants.map((options) =>
      startTestService(descriptor, { deps: { config }, ...options }),
    );
    services.push(...(await Promise.all(starting)));
  });
  afterAll(() => Promise.all(services.map((service) => service.close())));
  beforeEach(() => services.forEach((service) => service.logs.clear()));
  return variants.map((_, index) => clientOf(() => services[index]!)) as {
    [Index in keyof Variants]: NotesClient;
  };
}
type NotesClient = ReturnType<typeof clientOf>;

function clientOf(service: () => NotesService) {
  const call = (method: string, path: string, options?: Options) =>
    service().request(method, path, options);
  return {
    service,
    call,
    /** GET, PUT (of a new title) or DELETE of the note `id`. */
    act: (method: string, id: number | string) =>
      call(method, `/notes/${id}`, method === 'PUT' ? { json: { title: 'x' } } : {}),
    /** Creates a note, which must answer 201, and gives its body. */
    create: async <Note = { id: number }>(json: unknown): Promise<Note> => {
      const answer = await call('POST', '/notes', { json });
      expect(answer.status, answer.text).toBe(201);
      return answer.json as Note;
    },
    /** How many notes the store holds (with this title). */
    count: async (title?: string) => {
      const sql = 'SELECT count(*)::int AS n FROM notes WHERE $1::text IS NULL OR title = $1';
      return (await service().db.query<{ n: number }>(sql, [title ?? null])).rows[0]!.n;
    },
  };
}

/**
 * Both notes services, for tests of what they share: a note's body in each one's shape (`text`
 * names its text field), the field its errors are worded in, the status it answers invalid input
 * and a reused Idempotency-Key with, and the form of its timestamps.
 */
export const NOTES_SERVICES = [
  {
    name: 'notes8080',
    ...{ descriptor: notes8080, text: 'body', error: 'error' },
    ...{ invalid: 400, conflict: 400, timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ },
    note: (title: string, text = 'x') => ({ title, body: text }),
  },
  {
    name: 'notes8000',
    ...{ descriptor: notes8000, text: 'content', error: 'detail' },
    ...{ invalid: 422, conflict: 422, timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/ },
    note: (title: string, text = 'x') => ({ title, content: text }),
  },
] as const;
