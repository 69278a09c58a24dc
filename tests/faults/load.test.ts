import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { send, type Request } from '../../harness/http.js';
import { withClient, type ScratchDatabase } from '../../harness/postgres.js';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { NOTES_SERVICES, TEXT_FIELD, type NotesService } from '../support/hostileLoad.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';
import { expectChecks } from '../support/checks.js';

// Mixed create/read/update/delete at 50 connections against each notes service of the
// process, both at once, then the table compared with what the clients believe it holds.

const CONNECTIONS = 50;
const DURATION_MS = 5_000;

/** What a client believes one note holds (its `body` on 8080, its `content` on 8000). */
interface Belief {
  title: string;
  text: string;
}

/**
 * The body of an update, and what the note then holds. 8000 takes partial updates: sometimes
 * only one field is sent, and the other must stay as it was.
 */
function update(service: NotesService, wanted: Belief, old: Belief) {
  const which = service === 'notes8000' ? Math.random() : 1;
  if (which < 0.33)
    return {
      body: { title: wanted.title },
      next: { ...old, title: wanted.title },
    };
  if (which < 0.66)
    return {
      body: { content: wanted.text, title: null },
      next: { ...old, text: wanted.text },
    };
  return {
    body: { title: wanted.title, [TEXT_FIELD[service]]: wanted.text },
    next: wanted,
  };
}

/** Every client's errors, and what the clients believe the table holds, by id. */
async function runLoad(service: NotesService, baseUrl: string) {
  const field = TEXT_FIELD[service];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const errors: string[] = [];
  const beliefs = new Map<number, Belief>();
  const deadline = performance.now() + DURATION_MS;
  let sequence = 0;
  const call = (request: Request) => send(baseUrl, { ...request, agent, timeoutMs: 10_000 });
  // Unicode and varied lengths, so that the comparison afterwards checks the bytes too.
  const newBelief = (n = sequence++): Belief => ({
    title: `note ${n} 📝`,
    text: `text ${n} ${'ü'.repeat(n % 300)}`,
  });
  const holds = (note: Record<string, unknown>, belief: Belief) =>
    note?.title === belief.title && note[field] === belief.text;

  // Each client owns its notes, so every answer is predictable: any surprise is an error.
  async function client(worker: number) {
    const owned = new Map<number, Belief>();
    const fail = (what: string) => errors.push(`client ${worker}: ${what}`);
    while (performance.now() < deadline) {
      const ids = [...owned.keys()];
      const pick = Math.random();
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      try {
        if (ids.length === 0 || pick < 0.35) {
          const belief = newBelief();
          const json = { title: belief.title, [field]: belief.text };
          const response = await call({ method: 'POST', path: '/notes', json });
          const note = response.json as { id?: unknown };
          if (response.status !== 201 || typeof note?.id !== 'number')
            fail(`create → ${response.status}`);
          else owned.set(note.id, belief);
        } else if (pick < 0.65) {
          const response = await call({ method: 'GET', path: `/notes/${id}` });
          const note = response.json as Record<string, unknown>;
          if (response.status !== 200 || !holds(note, owned.get(id)!))
            fail(
              `read ${id} → ${response.status} ${JSON.stringify(note).slice(0, 100)}, ` +
                `expected ${JSON.stringify(owned.get(id)).slice(0, 100)}`,
            );
        } else if (pick < 0.85) {
          const { body, next } = update(service, newBelief(), owned.get(id)!);
          const response = await call({
            method: 'PUT',
            path: `/notes/${id}`,
            json: body,
          });
          const note = response.json as Record<string, unknown>;
          if (response.status !== 200 || !holds(note, next))
            fail(`update ${id} → ${response.status} ${JSON.stringify(note).slice(0, 100)}`);
          // Whatever the answer, the client believes what it asked for; the comparison will tell.
          owned.set(id, next);
        } else {
          const response = await call({
            method: 'DELETE',
            path: `/notes/${id}`,
          });
          if (response.status !== (service === 'notes8080' ? 204 : 200))
            fail(`delete ${id} → ${response.status}`);
          owned.delete(id);
        }
      } catch (error) {
        fail(String(error));
      }
    }
    for (const [id, belief] of owned) beliefs.set(id, belief);
  }

  await Promise.all(Array.from({ length: CONNECTIONS }, (_, worker) => client(worker)));
  agent.destroy();
  return { errors, beliefs };
}

describe('load with accounting', () => {
  const dataDir = useTemporaryDataDir();
  let database: ScratchDatabase;
  let services: RunningProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    services = await startProcess({
      dataDir: dataDir(),
      env: { DATABASE_URL: database.url },
    });
  }, 180_000);
  afterAll(async () => {
    await services?.stop();
    await database?.drop();
  });

  test.concurrent.each(NOTES_SERVICES)(
    `%s: ${DURATION_MS / 1000} s of mixed CRUD at ${CONNECTIONS} connections; ` +
      'the table matches the clients',
    async (service) => {
      const { errors, beliefs } = await runLoad(service, services!.urls[service]);
      // The table, read straight from PostgreSQL. pg reads a bigint as a string, since it may not
      // fit a JavaScript number; note ids always do.
      const { rows } = await withClient(database.url, (client) =>
        client.query<{ id: string; title: string; text: string }>(
          `SELECT id, title, ${TEXT_FIELD[service]} AS text FROM ${service}.notes`,
        ),
      );
      const table = new Map(rows.map(({ id, title, text }) => [Number(id), { title, text }]));
      const matches =
        table.size === beliefs.size &&
        [...beliefs].every(([id, belief]) => {
          const row = table.get(id);
          return row?.title === belief.title && row.text === belief.text;
        });
      if (errors.length)
        console.error(`${service} load errors:\n${errors.slice(0, 10).join('\n')}`);
      expectChecks({
        'zero errors': errors.length === 0,
        "every 201 present, every delete gone, every update's last value": matches,
        'the process still runs': services!.child.exitCode === null,
      });
    },
    DURATION_MS + 120_000,
  );
});
