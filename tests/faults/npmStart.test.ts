import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import { runUntilExit, startProcess, type ProcessOptions } from '../../harness/processes.js';
import type { RunningProcess } from '../../harness/processes.js';
import {
  descendants,
  isAlive,
  listeningPorts,
  postgresProcessesFor,
} from '../../harness/procfs.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';
import { expectChecks } from '../support/checks.js';
import * as traffic from '../support/trafficFlow.js';

// `npm start` as a newcomer and an operator run it: the embedded PostgreSQL of one data folder,
// one instance on it, notes kept across kills and restarts, a database that crashes, every
// signal. Every test starts on the same folder, as an operator's restarts do: each leaves nothing
// running on it.

const dataDir = useTemporaryDataDir();
const running: RunningProcess[] = [];

/** The entry point on the folder's embedded PostgreSQL (compiled, unless said otherwise). */
async function start(options: Partial<ProcessOptions> = {}) {
  const started = await startProcess({
    form: 'compiled',
    dataDir: dataDir(),
    ...options,
    env: { DATABASE_URL: '', ...options.env },
  });
  running.push(started);
  return started;
}
afterEach(() => Promise.all(running.splice(0).map((server) => server.stop(5_000))));

const get = (url: string, path: string) => send(url, { method: 'GET', path });

async function create(server: RunningProcess, title: string): Promise<number> {
  const created = await send(server.urls.notes8080, {
    method: 'POST',
    path: '/notes',
    json: { title },
  });
  expect(created.status).toBe(201);
  return (created.json as { id: number }).id;
}

/**
 * Resolves once what was spawned, what it started and the folder's PostgreSQL are all gone, or
 * fails after `ms`.
 */
async function allGoneWithin(server: RunningProcess, ms: number, signal: () => unknown) {
  const all = [...descendants(server.child.pid!), ...(await postgresProcessesFor(dataDir()))];
  await signal();
  await expect.poll(() => all.filter(isAlive), { timeout: ms, interval: 100 }).toEqual([]);
}

describe('npm start on the embedded PostgreSQL of a data folder', () => {
  test(
    'serves the three services, one instance per ' +
      'folder, and keeps notes across a kill and a restart',
    async () => {
      const first = await start();
      for (const name of ['notes8080', 'notes8000', 'auth'])
        expect(first.output()).toMatch(
          new RegExp(`${name} listening on http://127\\.0\\.0\\.1:\\d+`),
        );
      expect((await get(first.urls.notes8000, '/health')).json).toEqual({ status: 'healthy' });
      const login = await get(first.urls.auth, '/login');
      expect(login.status).toBe(200);
      expect(login.text).toContain('lang="ja"');
      const id = await create(first, 'kept');

      // A second start on the same folder: refused at once in one line, touching nothing.
      const databases = await postgresProcessesFor(dataDir());
      const second = await runUntilExit({
        dataDir: dataDir(),
        env: { DATABASE_URL: '' },
        form: 'compiled',
      });
      expect(second.code).toBe(1);
      expect(second.ms).toBeLessThan(2_000);
      const lines = second.output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Another instance (pid ${first.pid}, running since `);
      expect(lines[0]).toContain(`is using DATA_DIR=${dataDir()}.`);
      expect(lines[0]).toContain(
        'another DATA_DIR and other ports (NOTES8080_PORT, NOTES8000_PORT, AUTH_PORT)',
      );
      expect(await postgresProcessesFor(dataDir())).toEqual(databases);
      expect((await get(first.urls.notes8080, `/notes/${id}`)).status).toBe(200);

      // A client that hangs up in the middle of a download is logged too, as JSON: every line is
      // one JSON object when the output is not a terminal.
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(login.text)![1]!;
      await new Promise<void>((resolve) => {
        const socket = net.connect(Number(new URL(first.urls.auth).port), '127.0.0.1', () =>
          socket.write(`GET ${asset} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
        );
        socket.once('data', () => {
          socket.destroy();
          resolve();
        });
      });
      await sleep(300);
      const printed = first.output().trim().split('\n');
      expect(printed.filter((line) => !line.startsWith('{'))).toEqual([]);
      expect(logLines(first.output())).toHaveLength(printed.length);

      // Killed, it leaves its PostgreSQL running: the next start (from source) takes over.
      first.child.kill('SIGKILL');
      await first.exited;
      expect((await postgresProcessesFor(dataDir())).length).toBeGreaterThan(0);
      const next = await start({ form: 'source' });
      expect((await get(next.urls.notes8080, `/notes/${id}`)).json).toMatchObject({
        title: 'kept',
      });

      // Ctrl-C in the terminal: SIGINT stops everything, the database included.
      next.child.kill('SIGINT');
      expect(await next.exited).toBe(0);
      expect(await postgresProcessesFor(dataDir())).toEqual([]);
    },
    180_000,
  );

  test('of two starts at once, exactly one runs and the other gets the one line', async () => {
    const outcomes = await Promise.allSettled([start(), start()]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(String(refused?.reason)).toMatch(
      /Another instance \(pid \d+, running since .*\) is using DATA_DIR=/,
    );
    expect(String(refused?.reason)).not.toMatch(/\n\s+at /);
  });
  test('a SIGKILLed postmaster restarts within 5 s; no acknowledged write is lost', async () => {
    const services = await start({ form: 'source' });
    const flow = traffic.trafficFlow(services.urls);
    await sleep(1_000);
    const [postmaster] = await postgresProcessesFor(dataDir());
    const killedAt = performance.now();
    process.kill(postmaster!, 'SIGKILL');
    const recovered = () =>
      Math.max(flow.recovery('notes8080', killedAt), flow.recovery('notes8000', killedAt));
    while (recovered() === Infinity && performance.now() - killedAt < 3 * traffic.RECOVER_WITHIN_MS)
      await sleep(50);
    await sleep(1_000);
    await flow.stop();
    // Every note a client was told was created (201) must be readable now.
    const acknowledged = flow.notes().filter((s) => s.status === 201);
    const lost = [];
    for (const { service, body } of acknowledged) {
      const path = `/notes/${(body as { id: number }).id}`;
      const read = await get(services.urls[service as 'notes8080'], path);
      if (read.status !== 200) lost.push(`${service} ${path}: ${read.status}`);
    }
    expectChecks({
      'each notes service served again within 5 s of the crash':
        recovered() <= traffic.RECOVER_WITHIN_MS,
      'meanwhile every request answered 2xx or 500 in shape, within 5 s': flow
        .notes()
        .filter((s) => s.startedAt >= killedAt)
        .every(
          (s) =>
            (traffic.isSuccess(s) || traffic.isShapedOutage(s)) &&
            s.endedAt - s.startedAt <= traffic.ANSWER_WITHIN_MS,
        ),
      'every acknowledged note is still there': acknowledged.length > 0 && lost.length === 0,
      'the crash and the restart were logged': logLines(services.output()).some(
        (line) => line.msg === 'embedded PostgreSQL exited unexpectedly; starting it again',
      ),
      'the process kept running': services.child.exitCode === null,
    });
    expect(await services.stop()).toBe(0);
  }, 120_000);
});

describe('signals', () => {
  test(
    'Ctrl-C reaches the whole group of `npm start`, yet the database stops last: ' +
      'each service answers /ready with 503 in its shape while it drains, and still serves',
    async () => {
      const server = await start({
        env: { SHUTDOWN_DRAIN_MS: '3000' },
        form: 'npm',
        ownGroup: true,
      });
      const id = await create(server, 'read during the drain');
      await allGoneWithin(server, 10_000, async () => {
        process.kill(-server.child.pid!, 'SIGINT');
        await sleep(500);
        const ready = await Promise.all(
          [server.urls.notes8080, server.urls.notes8000, server.urls.auth].map((url) =>
            get(url, '/ready'),
          ),
        );
        expect(ready.map(({ status, json }) => ({ status, json }))).toEqual([
          { status: 503, json: { error: 'shutting down' } },
          { status: 503, json: { detail: 'shutting down' } },
          { status: 503, json: { error: 'shutting down' } },
        ]);
        expect((await get(server.urls.notes8080, `/notes/${id}`)).json).toMatchObject({
          title: 'read during the drain',
        });
        expect((await get(server.urls.notes8080, '/live')).status).toBe(200);
      });
      const lines = logLines(server.output());
      expect(lines.map((line) => line.msg)).toContain('stopped');
      // Nothing went wrong on the way: no pooled connection cut by a database stopping first.
      expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    },
  );

  test.each([
    ['SIGTERM to the group of `npm start` stops everything', 'SIGTERM', true],
    ['SIGHUP to the group of `npm start` stops everything', 'SIGHUP', true],
    ['SIGTERM to npm alone stops the server and the database', 'SIGTERM', false],
    ['when npm is killed, the server notices and stops everything', 'SIGKILL', false],
  ] as const)('%s within 10 s', async (_, signal, group) => {
    const server = await start({ form: 'npm', ownGroup: group });
    await allGoneWithin(server, 10_000, () =>
      process.kill(group ? -server.child.pid! : server.child.pid!, signal),
    );
    if (group) expect(server.output()).toContain('stopped');
  });
});

describe('what a start runs', () => {
  test(
    'SERVICES runs only the services named (the others neither listen nor touch their schemas); ' +
      'LOG_FORMAT=pretty gives readable lines',
    async () => {
      const database = await createTestDatabase();
      try {
        const server = await start({
          env: { DATABASE_URL: database.url, SERVICES: 'notes8000', LOG_FORMAT: 'pretty' },
        });
        expect(Object.keys(server.urls)).toEqual(['notes8000']);
        expect(await listeningPorts(server.pid)).toEqual([
          Number(new URL(server.urls.notes8000).port),
        ]);
        const schemas = await withClient(database.url, (client) =>
          client.query(
            `SELECT schema_name AS name FROM information_schema.schemata
              WHERE schema_name IN ('notes8080', 'notes8000', 'auth')`,
          ),
        );
        expect(schemas.rows).toEqual([{ name: 'notes8000' }]);
        expect(server.output()).toMatch(/INFO.*notes8000 listening on http:\/\/127\.0\.0\.1:\d+/);
        expect(server.output()).not.toMatch(/^\{/m);
      } finally {
        await database.drop();
      }
    },
  );
});
