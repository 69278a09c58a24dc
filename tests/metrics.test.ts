import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send, type Reply } from '../harness/http.js';
import type { RunningProcess } from '../harness/processes.js';
import { ConfigError, loadConfig } from '../server/config.js';
import { startTestProcess } from './support/services.js';

// The metrics as Prometheus reads them: the whole process started as `npm start` starts it, with
// METRICS_PORT=0, its requests answered, then GET /metrics on the port it reports. The two
// processes start side by side before the tests: the starts take most of the file's time.

const cleanups: (() => Promise<unknown>)[] = [];
let [withSessionsInMemory, withSessionsInPostgres] = [] as RunningProcess[];
beforeAll(async () => {
  [withSessionsInMemory, withSessionsInPostgres] = await Promise.all([
    startTestProcess({ METRICS_PORT: '0' }, cleanups),
    startTestProcess({ METRICS_PORT: '0', SESSION_STORE: 'postgres' }, cleanups),
  ]);
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Labels = Record<string, string>;
type Sample = { name: string; labels: Labels; value: number };

/** The samples of Prometheus's text format: `name{label="value",…} number`, comments left out. */
const samplesOf = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [, name, labels = '', value] =
        /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line) ??
        expect.fail(`not a sample: ${line}`);
      const pairs = [...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)];
      return {
        name: name!,
        labels: Object.fromEntries(pairs.map((pair) => pair.slice(1))),
        value: Number(value),
      };
    });

/** The samples named `name` that carry at least these labels. */
const samplesWhere = (samples: Sample[], name: string, labels: Labels = {}) =>
  samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
const valuesOf = (samples: Sample[], name: string, labels: Labels = {}) =>
  samplesWhere(samples, name, labels).map((sample) => sample.value);

async function scrape(server: RunningProcess): Promise<{ reply: Reply; samples: Sample[] }> {
  const reply = await send(server.metricsUrl!, { method: 'GET', path: '/metrics' });
  expect(reply.status).toBe(200);
  return { reply, samples: samplesOf(reply.text) };
}

const login = (server: RunningProcess, password: string) =>
  send(server.urls.auth, {
    method: 'POST',
    path: '/api/login',
    json: { email: 'user@example.com', password },
  });

/** A note of 1,001 bytes of title and body: 1,097 in the storage count (96 more for the row). */
const NOTE = { title: 'm', body: 'x'.repeat(1000) };
const NOTE_BYTES = 1097;

const COUNT = 'http_request_duration_seconds_count';
/**
 * The requests of these labels answered between two scrapes (the harness asks each service's `/`
 * while it waits for the ports).
 */
const answeredSince = (before: Sample[], after: Sample[], labels: Labels) =>
  (valuesOf(after, COUNT, labels)[0] ?? 0) - (valuesOf(before, COUNT, labels)[0] ?? 0);

describe('METRICS_PORT', () => {
  test('GET /metrics: durations by route, logins, pools, bytes, sessions, process', async () => {
    const server = withSessionsInMemory!;
    const metrics = new URL(server.metricsUrl!);
    expect(metrics.hostname).toBe('127.0.0.1');
    const ports = Object.values(server.urls).map((url) => new URL(url).port);
    expect(ports).not.toContain(metrics.port);

    const before = (await scrape(server)).samples;
    const notes = server.urls.notes8080;
    expect((await send(notes, { method: 'GET', path: '/notes/123' })).status).toBe(404);
    expect((await send(notes, { method: 'GET', path: '/no-such-path-98765' })).status).toBe(404);
    const created = await send(notes, { method: 'POST', path: '/notes', json: NOTE });
    expect(created.status).toBe(201);
    const id = (created.json as { id: number }).id;
    expect((await send(notes, { method: 'GET', path: `/notes/${id}` })).status).toBe(200);
    expect((await login(server, 'wrong password')).status).toBe(401);
    expect((await login(server, 'user-password')).status).toBe(200);

    const { reply, samples } = await scrape(server);
    expect(reply.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');

    const notesRequests = { service: 'notes8080', method: 'GET', route: '/notes/{id}' };
    for (const labels of [
      { ...notesRequests, status: '404' },
      { ...notesRequests, status: '200' },
      { service: 'notes8080', method: 'POST', route: '/notes', status: '201' },
      { service: 'notes8080', method: 'GET', route: 'unmatched', status: '404' },
      { service: 'auth', method: 'POST', route: '/api/login', status: '401' },
      { service: 'auth', method: 'POST', route: '/api/login', status: '200' },
    ]) {
      expect(answeredSince(before, samples, labels), JSON.stringify(labels)).toBe(1);
    }
    // The seconds it took, and a bucket for each bound.
    const read = { ...notesRequests, status: '200' };
    expect(valuesOf(samples, 'http_request_duration_seconds_sum', read)[0]).toBeGreaterThan(0);
    const inf = { ...read, le: '+Inf' };
    expect(valuesOf(samples, 'http_request_duration_seconds_bucket', inf)).toEqual([1]);
    expect(reply.text).toContain('# TYPE http_request_duration_seconds histogram');
    // Buckets as Prometheus reads them: cumulative, from the smallest bound, the last at +Inf.
    const create = { route: '/notes', method: 'POST' };
    const buckets = samplesWhere(samples, 'http_request_duration_seconds_bucket', create);
    const bounds = '0.0005 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 +Inf';
    expect(buckets.map((sample) => sample.labels.le).join(' ')).toBe(bounds);
    const counts = buckets.map((sample) => sample.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(1);
    // No path a client sent is a label.
    for (const raw of ['/notes/123', `/notes/${id}`, '98765'])
      expect(reply.text).not.toContain(raw);
    const routes = samplesWhere(samples, COUNT, { service: 'notes8080' }).map(
      (sample) => sample.labels.route,
    );
    expect([...new Set(routes)].sort()).toEqual(['/notes', '/notes/{id}', 'unmatched']);

    for (const [outcome, count] of Object.entries({ failed: 1, succeeded: 1, throttled: 0 }))
      expect(valuesOf(samples, 'auth_login_attempts_total', { outcome }), outcome).toEqual([count]);
    expect(valuesOf(samples, 'auth_sessions', { store: 'memory' })).toEqual([1]);

    for (const [service, stored] of Object.entries({ notes8080: NOTE_BYTES, notes8000: 0 })) {
      const pool = (state: string) => valuesOf(samples, 'db_pool_connections', { service, state });
      const [[total], [idle]] = [pool('total'), pool('idle')];
      expect(total).toBeGreaterThanOrEqual(1);
      expect(idle).toBeLessThanOrEqual(total!);
      expect(pool('waiting')).toEqual([0]);
      expect(valuesOf(samples, 'notes_max_bytes', { service })).toEqual([1024 ** 3]);
      expect(valuesOf(samples, 'notes_stored_bytes', { service })).toEqual([stored]);
    }
    // The login service keeps no tables with sessions in memory: it has no pool.
    expect(valuesOf(samples, 'db_pool_connections', { service: 'auth' })).toEqual([]);

    expect(valuesOf(samples, 'process_cpu_user_seconds_total')[0]).toBeGreaterThan(0);
    expect(valuesOf(samples, 'nodejs_heap_size_used_bytes')[0]).toBeGreaterThan(0);

    // Only GET /metrics is answered; the metrics port serves nothing else, and no service serves
    // them.
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/metrics/'],
      ['POST', '/metrics'],
    ])
      expect((await send(server.metricsUrl!, { method: method!, path: path! })).status).toBe(404);
    expect((await send(notes, { method: 'GET', path: '/metrics' })).status).toBe(404);
  });

  test('scrapes at once share one gathering; a later scrape sees later requests', async () => {
    // With the sessions in PostgreSQL the gathering asks the database (once at a time).
    const server = withSessionsInPostgres!;
    const scrapes = Array.from({ length: 20 }, () =>
      send(server.metricsUrl!, { method: 'GET', path: '/metrics' }),
    );
    const replies = await Promise.all(scrapes);
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    // Each gathering reads the process's CPU time and heap afresh: gatherings of their own would
    // give 20 texts.
    expect(new Set(replies.map((reply) => reply.text)).size).toBeLessThanOrEqual(5);
    const { samples: before } = await scrape(server);
    const read = await send(server.urls.notes8080, { method: 'GET', path: '/notes/123' });
    expect(read.status).toBe(404);
    const labels = { service: 'notes8080', method: 'GET', route: '/notes/{id}', status: '404' };
    expect(answeredSince(before, (await scrape(server)).samples, labels)).toBe(1);
  });

  test("a METRICS_PORT that is a service's port, or no port, stops the start in one line", () => {
    const own = ': the metrics need a port of their own';
    const notes8080 = { SERVICES: 'notes8080', NOTES8080_PORT: '9464' };
    const number = 'expected a port number from 0 to 65535';
    for (const [env, message] of [
      [{ METRICS_PORT: '3000' }, `METRICS_PORT=3000 is AUTH_PORT's${own}`],
      [{ METRICS_PORT: '9464', ...notes8080 }, `METRICS_PORT=9464 is NOTES8080_PORT's${own}`],
      [{ METRICS_PORT: 'prometheus' }, `METRICS_PORT="prometheus" is not valid: ${number}`],
    ] as const)
      expect(() => loadConfig(env)).toThrow(new ConfigError(message));
    // A port of a service this process does not run is free for the metrics.
    const free = loadConfig({ METRICS_PORT: '3000', SERVICES: 'notes8080' }).metrics;
    expect(free).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(loadConfig({}).metrics).toBeUndefined();
  });
});
