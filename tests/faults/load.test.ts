import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { percentile, send, type Request } from '../../harness/http.js';
import { withClient, type ScratchDatabase } from '../../harness/postgres.js';
import { rssBytes, startProcess, type RunningProcess } from '../../harness/processes.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';
import { expectChecks, passed, report } from './report.js';
import { FULL, scale } from './scale.js';

// Mixed create/read/update/delete at 50 connections against each notes service of the
// process, then the table compared with what the clients believe it holds.

const CONNECTIONS = 50;
const DURATION_MS = scale(5_000, 60_000);
const RSS_GROWTH_LIMIT = 0.1;

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
  operations: Record<'create' | 'read' | 'update' | 'delete', number>;
  errors: string[];
  latencies: number[];
  beliefs: Map<number, Belief>;
  rss: { at: number; bytes: number }[];
  elapsedMs: number;
}

async function runLoad(service: Service, baseUrl: string, serverPid: number): Promise<LoadResult> {
  const dialect = dialects[service];
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const result: LoadResult = {
    operations: { create: 0, read: 0, update: 0, delete: 0 },
    errors: [],
    latencies: [],
    beliefs: new Map(),
    rss: [],
    elapsedMs: 0,
  };
  const started = performance.now();
  const deadline = started + DURATION_MS;
  // One reading at a time, so the samples stay in time order: the growth check compares early ones
  // with late ones.
  let sampling = Promise.resolve();
  const sampler = setInterval(() => {
    const at = performance.now() - started;
    sampling = sampling.then(
      async () => void result.rss.push({ at, bytes: await rssBytes(serverPid) }),
    );
  }, 500);
  let sequence = 0;

  const call = async (request: Request) => {
    const response = await send(baseUrl, { ...request, agent, timeoutMs: 10_000 });
    result.latencies.push(response.ms);
    return response;
  };
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
          result.operations.create++;
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
          result.operations.read++;
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
          result.operations.update++;
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
          result.operations.delete++;
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
  clearInterval(sampler);
  await sampling;
  result.elapsedMs = performance.now() - started;
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

const median = (values: number[]) => percentile(values, 50);
const mib = (bytes: number) => bytes / 2 ** 20;

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

  for (const [index, service] of (['notes8080', 'notes8000'] as const).entries()) {
    test(
      `${service}: ${DURATION_MS / 1000} s of mixed CRUD ` +
        `at ${CONNECTIONS} connections; the table matches the clients`,
      async () => {
        const load = await runLoad(service, services!.urls[service], services!.pid);
        const table = await tableRows(database.url, service);
        const { missing, unexpected, differing } = compare(load.beliefs, table);

        const total = Object.values(load.operations).reduce((sum, count) => sum + count, 0);
        // RSS saws up and down with each garbage collection (±15% here); a leak shows as a rising
        // floor, so the lowest RSS of the first and of the last quarter of the second half are
        // compared.
        const half = load.rss
          .filter((sample) => sample.at >= load.elapsedMs / 2)
          .map((sample) => sample.bytes);
        const quarter = Math.max(1, Math.floor(half.length / 4));
        const rssMid = Math.min(...half.slice(0, quarter));
        const rssEnd = Math.min(...half.slice(-quarter));
        const growth = (rssEnd - rssMid) / rssMid;

        const checks = {
          'zero errors': load.errors.length === 0,
          "every 201 present, every delete gone, every update's last value":
            missing.length === 0 && unexpected.length === 0 && differing.length === 0,
          'the process still runs': services!.child.exitCode === null,
          ...(FULL
            ? { 'RSS (floor after GC) grows < 10% in the second half': growth < RSS_GROWTH_LIMIT }
            : {}),
        };
        report({
          key: `4${'ab'[index]}`,
          case: `4. Load with accounting: ${service === 'notes8080' ? 'notes 8080' : 'notes 8000'}`,
          done:
            `${(load.elapsedMs / 1000).toFixed(0)} s of mixed create (35%) / read ` +
            `(30%) / update ` +
            `(20%${service === 'notes8000' ? ', partial updates included' : ''}) / delete ` +
            `(15%) at ${CONNECTIONS} keep-alive connections, each client owning its notes; ` +
            `the process started as \`npm start\` does, on the test PostgreSQL; then the ` +
            `table read back with SQL.`,
          expected:
            'Zero errors; the table holds exactly what the clients believe (every ' +
            "201 present, every delete gone, every update's last value); RSS in " +
            'the second half grows < 10% (its floor after garbage collection).',
          observed:
            `${total} requests (${Object.entries(load.operations)
              .map(([op, count]) => `${op} ${count}`)
              .join(', ')}), ${Math.round(total / (load.elapsedMs / 1000))} req/s, ` +
            `latency p50 ${median(load.latencies).toFixed(1)} ms, ` +
            `p99 ${percentile(load.latencies, 99).toFixed(1)} ms; ${load.errors.length} ` +
            `errors` +
            (load.errors.length ? ` (e.g. ${load.errors.slice(0, 2).join('; ')})` : '') +
            `. ` +
            `Table: ${table.size} rows vs ${load.beliefs.size} believed; ` +
            `missing ${missing.length}, unexpected ${unexpected.length}, ` +
            `differing ${differing.length}. RSS of the server process (sampled every 0.5 ` +
            `s): ${mib(load.rss[0]?.bytes ?? NaN).toFixed(0)} MiB at start, ` +
            `peak ${mib(Math.max(...half)).toFixed(0)} MiB in the second half; floor after ` +
            `GC ${mib(rssMid).toFixed(1)} MiB at its start, ${mib(rssEnd).toFixed(1)} MiB ` +
            `at its end (${(growth * 100).toFixed(1)}%).`,
          pass: passed(checks),
        });
        if (load.errors.length)
          console.error(`${service} load errors:\n${load.errors.slice(0, 10).join('\n')}`);
        expectChecks(checks);
      },
      DURATION_MS + 120_000,
    );
  }
});
