import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import {
  runUntilExit,
  startProcess,
  type ProcessOptions,
  type RunningProcess,
} from '../../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { isAlive } from '../../harness/procfs.js';
import { descendants, listeningPorts, postgresProcessesFor } from '../../harness/procfs.js';
import { createTestDatabase } from '../support/services.js';

// `npm start` as a newcomer and an operator run it: the embedded PostgreSQL of one data folder,
// one instance on it, notes kept across kills and restarts, every signal, a database that crashes.

const running: RunningProcess[] = [];
const dataDirs: string[] = [];

async function dataDir(): Promise<string> {
  const dir = await temporaryDataDir();
  dataDirs.push(dir);
  return dir;
}

/** The entry point on the embedded PostgreSQL of `dir` (compiled, unless said otherwise). */
async function start(dir: string, options: Partial<ProcessOptions> = {}) {
  const started = await startProcess({
    form: 'compiled',
    dataDir: dir,
    ...options,
    env: { DATABASE_URL: '', ...options.env },
  });
  running.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(5_000)));
  await Promise.all(dataDirs.splice(0).map(removeDataDir));
});

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

/** Resolves once every process is gone, or fails after `ms`. */
async function allGone(pids: number[], ms: number): Promise<void> {
  await expect.poll(() => pids.filter(isAlive), { timeout: ms, interval: 100 }).toEqual([]);
}

/** The processes of a run: what was spawned, what it started, and its data folder's PostgreSQL. */
const processesOf = async (server: RunningProcess, dir: string) => [
  ...descendants(server.child.pid!),
  ...(await postgresProcessesFor(dir)),
];

describe('npm start on the embedded PostgreSQL of a data folder', () => {
  test(
    'serves the three services, one instance per ' +
      'folder, and keeps notes across a kill and a restart',
    async () => {
      const dir = await dataDir();
      const first = await start(dir);
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
      const databases = await postgresProcessesFor(dir);
      const second = await runUntilExit({
        dataDir: dir,
        env: { DATABASE_URL: '' },
        form: 'compiled',
      });
      expect(second.code).toBe(1);
      expect(second.ms).toBeLessThan(2_000);
      const lines = second.output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Another instance (pid ${first.pid}, running since `);
      expect(lines[0]).toContain(`is using DATA_DIR=${dir}.`);
      expect(lines[0]).toContain(
        'another DATA_DIR and other ports (NOTES8080_PORT, NOTES8000_PORT, AUTH_PORT)',
      );
      expect(await postgresProcessesFor(dir)).toEqual(databases);
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
      expect((await postgresProcessesFor(dir)).length).toBeGreaterThan(0);
      const next = await start(dir, { form: 'source' });
      expect((await get(next.urls.notes8080, `/notes/${id}`)).json).toMatchObject({
        title: 'kept',
      });

      // Ctrl-C in the terminal: SIGINT stops everything, the database included.
      next.child.kill('SIGINT');
      expect(await next.exited).toBe(0);
      expect(await postgresProcessesFor(dir)).toEqual([]);
    },
    180_000,
  );

  test('of two starts at once, exactly one runs and the other gets the one line', async () => {
    const dir = await dataDir();
    const outcomes = await Promise.allSettled([start(dir), start(dir)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const [refused] = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome] : [],
    );
    expect(String(refused!.reason)).toMatch(
      /Another instance \(pid \d+, running since .*\) is using DATA_DIR=/,
    );
    expect(String(refused!.reason)).not.toMatch(/\n\s+at /);
  });
});

describe('signals', () => {
  test(
    'Ctrl-C reaches the whole group of `npm start`, yet the database stops last: ' +
      'each service answers /ready with 503 in its shape while it drains, and still serves',
    async () => {
      const dir = await dataDir();
      const server = await start(dir, {
        env: { SHUTDOWN_DRAIN_MS: '3000' },
        form: 'npm',
        ownGroup: true,
      });
      const id = await create(server, 'read during the drain');
      const all = await processesOf(server, dir);
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
      await allGone(all, 10_000);
      const lines = logLines(server.output());
      expect(lines.map((line) => line.msg)).toContain('stopped');
      // Nothing went wrong on the way: no pooled connection cut by a database stopping first.
      expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    },
  );

  test.each(['SIGTERM', 'SIGHUP'] as const)(
    '%s to the group of `npm start` stops everything within 10 s',
    async (signal) => {
      const dir = await dataDir();
      const server = await start(dir, { form: 'npm', ownGroup: true });
      const all = await processesOf(server, dir);
      process.kill(-server.child.pid!, signal);
      await allGone(all, 10_000);
      expect(server.output()).toContain('stopped');
    },
  );

  test.each([
    ['SIGTERM to npm alone stops the server and the database', 'SIGTERM'],
    ['when npm is killed, the server notices and stops everything', 'SIGKILL'],
  ] as const)('%s', async (_, signal) => {
    const dir = await dataDir();
    const server = await start(dir, { form: 'npm' });
    const all = await processesOf(server, dir);
    process.kill(server.child.pid!, signal);
    await allGone(all, 10_000);
  });
});

describe('what a start runs', () => {
  test(
    'SERVICES runs only the services named (the others neither listen nor touch their schemas); ' +
      'LOG_FORMAT=pretty gives readable lines',
    async () => {
      const database = await createTestDatabase();
      try {
        const server = await start(await dataDir(), {
          env: { DATABASE_URL: database.url, SERVICES: 'notes8000', LOG_FORMAT: 'pretty' },
        });
        expect(Object.keys(server.urls)).toEqual(['notes8000']);
        expect(await listeningPorts(server.pid)).toEqual([
          Number(new URL(server.urls.notes8000).port),
        ]);
        const schemas = await withClient(database.url, async (client) =>
          (
            await client.query<{ name: string }>(
              `SELECT schema_name AS name FROM information_schema.schemata
                WHERE schema_name IN ('notes8080', 'notes8000', 'auth')`,
            )
          ).rows.map((row) => row.name),
        );
        expect(schemas).toEqual(['notes8000']);
        expect(server.output()).toMatch(/INFO.*notes8000 listening on http:\/\/127\.0\.0\.1:\d+/);
        expect(server.output()).not.toMatch(/^\{/m);
      } finally {
        await database.drop();
      }
    },
  );
});
