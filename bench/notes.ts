import type pg from 'pg';
import { statementsFor, type NotesOperation, type StatementRecorder, type StatementTemplate } from './capture.js';
import { databaseLimit } from './limits.js';
import { EDITED_TITLE, noteJson, type NotesService } from './notesServices.js';
import type { Measurement } from './results.js';
import { measureScenario, withComposedLimit, type Round } from './scenario.js';
import { addNotes, cycle, once, resetNotes } from './seed.js';

/** Connections for the throughput scenarios: one per pooled database connection (DB_POOL_MAX default). */
export const NOTES_CONNECTIONS = 10;
export const SMALL_LIST = 100;
export const LARGE_LIST = 10_000;

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * One round of a notes service: each endpoint under load, each followed by its database limit
 * (the same statements through a pg Pool, same concurrency) on the same data.
 */
export async function notesRound(
  round: Round,
  service: NotesService,
  pool: pg.Pool,
  templates: Record<NotesOperation, StatementTemplate>,
  recorder: StatementRecorder,
): Promise<Measurement[]> {
  const url = round.urls[service.urlKey];
  const results: Measurement[] = [];
  let fastest = 0;

  const run = async (
    scenario: string,
    template: StatementTemplate,
    connections: number,
    http: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; body?: string; path: string; nextId?: () => number },
    nextDatabaseId: (() => number) | undefined = http.nextId,
  ) => {
    const { nextId } = http;
    const measured = await measureScenario(round, {
      service: service.name,
      scenario,
      load: {
        url,
        method: http.method,
        path: http.path,
        body: http.body,
        headers: http.body ? JSON_HEADERS : undefined,
        connections,
        nextPath: nextId && (() => http.path.replace('{id}', String(nextId()))),
      },
    });
    const database = await databaseLimit(
      pool,
      () => statementsFor(template, nextDatabaseId?.()),
      connections,
      round.timing,
    );
    fastest = Math.max(fastest, measured.load.requestsPerSecond, database.requestsPerSecond);
    const result = withComposedLimit(measured, 'database', database);
    results.push(result);
    return result;
  };

  const ids = await resetNotes(pool, service, SMALL_LIST);
  const list = await run(`GET /notes (${SMALL_LIST} notes)`, await recorder.list(), NOTES_CONNECTIONS, { path: '/notes' });
  list.responseBytes = await responseBytes(`${url}/notes`);
  await run('GET /notes/{id}', templates.show, NOTES_CONNECTIONS, { path: '/notes/{id}', nextId: cycle(ids) });
  await run('PUT /notes/{id}', templates.update, NOTES_CONNECTIONS, {
    method: 'PUT',
    path: '/notes/{id}',
    body: noteJson(service, EDITED_TITLE),
    nextId: cycle(ids),
  });
  await run('POST /notes', templates.create, NOTES_CONNECTIONS, { method: 'POST', path: '/notes', body: noteJson(service) });

  // Each delete needs a note of its own: seed more than the fastest rate seen could use up.
  const enough = Math.ceil(2 * fastest * (round.timing.warmupSeconds + round.timing.seconds)) + 1000;
  const httpVictims = once(await addNotes(pool, service, enough));
  const databaseVictims = once(await addNotes(pool, service, enough));
  const removed = await run(
    'DELETE /notes/{id}',
    templates.delete,
    NOTES_CONNECTIONS,
    { method: 'DELETE', path: '/notes/{id}', nextId: httpVictims.next },
    databaseVictims.next,
  );
  for (const [what, victims] of [['HTTP', httpVictims], ['database', databaseVictims]] as const) {
    if (victims.shortBy() > 0) removed.warnings.push(`${what} run ran out of seeded notes (${victims.shortBy()} requests)`);
  }

  await resetNotes(pool, service, LARGE_LIST);
  const large = await run(`GET /notes (${LARGE_LIST.toLocaleString('en')} notes)`, await recorder.list(), 1, { path: '/notes' });
  large.responseBytes = await responseBytes(`${url}/notes`);
  return results;
}

async function responseBytes(url: string): Promise<number> {
  const response = await fetch(url);
  return (await response.arrayBuffer()).byteLength;
}
