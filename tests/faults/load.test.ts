import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { send, type Request } from '../../harness/http.js';
import { withClient, type ScratchDatabase } from '../../harness/postgres.js';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';
import { expectChecks } from '../support/checks.js';

// Mixed create/read/update/delete at 50 connections against each notes service of the
// process, then the table compared with what the clients believe it holds.

const CONNECTIONS = 50;
const DURATION_MS = 5_000;

type Service = 'notes8080' | 'notes8000';

/** What a client believes one note holds: 8080 has `body`, 8000 has `content`. */
interface Belief {
  title: string;
  text: string;
}

/** The two services' dialects of the same operations. */
const dialects = {
  notes8080: {
    textField: 'body',
    update: (belief: Belief, _old?: Belief) => ({
      body: { title: belief.title, body: belief.text } as Record<string, unknown>,
      next: belief,
    }),
    deleted: 204,
  },
  notes8000: {
    textField: 'content',
    // A partial update: sometimes only one field is sent, and the other must stay as it was.
    update: (belief: Belief, old?: Belief) => {
      const which = Math.random();
      if (old && which < 0.33)
        return { body: { title: belief.title }, next: { title: belief.title, text: old.text } };
      if (old && which < 0.66)
        return {
          body: { content: belief.text, title: null },
          next: { title: old.title, text: belief.text },
        };
      return { body: { title: belief.title, content: belief.text }, next: belief };
    },
    deleted: 200,
  },
} as const;

interface LoadResult {
  errors: string[];
  beliefs: Map<number, Belief>;
}

async function runLoad(service: Service, baseUrl: string): Promise<LoadResult> {
  const dialect = dialects[service];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const result: LoadResult = { errors: [], beliefs: new Map() };
  const deadline = performance.now() + DURATION_MS;
  let sequence = 0;

  const call = (request: Request) => send(baseUrl, { ...request, agent, timeoutMs: 10_000 });
  const newBelief = (): Belief => {
    const n = sequence++;
    // Unicode and varied lengths, so that the comparison afterwards checks the bytes too.
    return { title: `note ${n} 📝`, text: `text ${n} ${'ü'.repeat(n % 300)}` };
  };

  // Each client owns its notes, so every answer is predictable: any surprise is an error.
  async function client(worker: number) {
    const owned = new Map<number, Belief>();
    const fail = (what: string) => result.errors.push(`client ${worker}: ${what}`);
    while (performance.now() < deadline) {
      const ids = [...owned.keys()];
      const pick = Math.random();
      const id = ids[Math.floor(Math.random() * ids.length)];
      try {
        if (ids.length === 0 || pick < 0.35) {
          const belief = newBelief();
          const response = await call({
            method: 'POST',
            path: '/notes',
            json: { title: belief.title, [dialect.textField]: belief.text },
          });
          const note = response.json as Record<string, unknown>;
          if (response.status !== 201 || typeof note?.id !== 'number')
            fail(`create → ${response.status}`);
          else owned.set(note.id, belief);
        } else if (pick < 0.65) {
          const response = await call({ method: 'GET', path: `/notes/${id}` });
          const note = response.json as Record<string, unknown>;
          const belief = owned.get(id)!;
          if (
            response.status !== 200 ||
            note.title !== belief.title ||
            note[dialect.textField] !== belief.text
          ) {
            fail(
              `read ${id} → ${response.status} ${JSON.stringify(note).slice(0, 100)}, ` +
                `expected ${JSON.stringify(belief).slice(0, 100)}`,
            );
          }
        } else if (pick < 0.85) {
          const { body, next } = dialect.update(newBelief(), owned.get(id));
          const response = await call({ method: 'PUT', path: `/notes/${id}`, json: body });
          const note = response.json as Record<string, unknown>;
          if (
            response.status !== 200 ||
            note.title !== next.title ||
            note[dialect.textField] !== next.text
          ) {
            fail(`update ${id} → ${response.status} ${JSON.stringify(note).slice(0, 100)}`);
          }
          // Whatever the answer, the client's belief is what it asked for; the comparison will
          // tell.
          owned.set(id, next);
        } else {
          const response = await call({ method: 'DELETE', path: `/notes/${id}` });
          if (response.status !== dialect.deleted) fail(`delete ${id} → ${response.status}`);
          owned.delete(id);
        }
      } catch (error) {
        fail(String(error));
      }
    }
    for (const [id, belief] of owned) result.beliefs.set(id, belief);
  }

  await Promise.all(Array.from({ length: CONNECTIONS }, (_, worker) => client(worker)));
  agent.destroy();
  return result;
}

/** The table, read straight from PostgreSQL. */
async function tableRows(url: string, service: Service): Promise<Map<number, Belief>> {
  const column = dialects[service].textField;
  const { rows } = await withClient(url, (client) =>
    // pg reads a bigint as a string, since it may not fit a JavaScript number; note ids always do.
    client.query<{ id: string; title: string; text: string }>(
      `SELECT id, title, ${column} AS text FROM ${service}.notes`,
    ),
  );
  return new Map(rows.map((row) => [Number(row.id), { title: row.title, text: row.text }]));
}

function compare(beliefs: Map<number, Belief>, table: Map<number, Belief>) {
  const missing = [...beliefs.keys()].filter((id) => !table.has(id));
  const unexpected = [...table.keys()].filter((id) => !beliefs.has(id));
  const differing = [...beliefs.entries()].filter(([id, belief]) => {
    const row = table.get(id);
    return row && (row.title !== belief.title || row.text !== belief.text);
  });
  return { missing, unexpected, differing };
}

describe('load with accounting', () => {
  const dataDir = useTemporaryDataDir();
  let database: ScratchDatabase;
  let services: RunningProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    services = await startProcess({ dataDir: dataDir(), env: { DATABASE_URL: database.url } });
  }, 180_000);

  afterAll(async () => {
    await services?.stop();
    await database?.drop();
  });

  for (const service of ['notes8080', 'notes8000'] as const) {
    test(
      `${service}: ${DURATION_MS / 1000} s of mixed CRUD ` +
        `at ${CONNECTIONS} connections; the table matches the clients`,
      async () => {
        const load = await runLoad(service, services!.urls[service]);
        const table = await tableRows(database.url, service);
        const { missing, unexpected, differing } = compare(load.beliefs, table);

        const checks = {
          'zero errors': load.errors.length === 0,
          "every 201 present, every delete gone, every update's last value":
            missing.length === 0 && unexpected.length === 0 && differing.length === 0,
          'the process still runs': services!.child.exitCode === null,
        };
        if (load.errors.length)
          console.error(`${service} load errors:\n${load.errors.slice(0, 10).join('\n')}`);
        expectChecks(checks);
      },
      DURATION_MS + 120_000,
    );
  }
});
