import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { listenOnFreePort, send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import { startTcpRelay } from '../../harness/tcpRelay.js';
import {
  descendants,
  listeningPorts,
  postgresProcessesFor,
  removeDataDir,
  ROOT,
  rssBytes,
  runUntilExit,
  startProcess,
  startScript,
  temporaryDataDir,
  type ProcessOptions,
  type RunningProcess,
} from '../../harness/processes.js';
import { createTestDatabase, postgresUrl } from '../support/services.js';

// `npm start` as operators run it: one instance per data folder, every signal, a database that
// crashes, start-up errors a person can read, migrations by hand, logs. Every test runs the real
// entry point.

const running: RunningProcess[] = [];
const dataDirs: string[] = [];

async function dataDir(): Promise<string> {
  const dir = await temporaryDataDir();
  dataDirs.push(dir);
  return dir;
}

async function start(options: ProcessOptions): Promise<RunningProcess> {
  const started = await startProcess({ form: 'compiled', ...options });
  running.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(5_000)));
  await Promise.all(dataDirs.splice(0).map(removeDataDir));
});

const EMBEDDED = { DATABASE_URL: '' };

/**
 * Every process of the run: the spawned one, what it started, and the PostgreSQL of its data
 * folder.
 */
async function processesOf(server: RunningProcess, dir: string): Promise<number[]> {
  return [...descendants(server.child.pid!), ...(await postgresProcessesFor(dir))];
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}

const isGone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

async function createNote(server: RunningProcess, title: string): Promise<number> {
  const created = await send(server.urls.notes8080, {
    method: 'POST',
    path: '/notes',
    json: { title },
  });
  expect(created.status).toBe(201);
  return (created.json as { id: number }).id;
}

describe('one instance per data folder', () => {
  test(
    'a second start refuses within 2 s in one line, ' +
      'touches nothing, and the first keeps serving',
    async () => {
      const dir = await dataDir();
      const first = await start({ dataDir: dir, env: EMBEDDED });
      const before = await postgresProcessesFor(dir);

      const second = await runUntilExit({ dataDir: dir, env: EMBEDDED, form: 'compiled' });
      expect(second.code).toBe(1);
      expect(second.ms).toBeLessThan(2_000);
      const lines = second.output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`pid ${first.pid}`);
      expect(lines[0]).toContain(`DATA_DIR=${dir}`);
      expect(lines[0]).toMatch(
        /another DATA_DIR and other ports \(NOTES8080_PORT, NOTES8000_PORT, AUTH_PORT\)/,
      );

      expect(await postgresProcessesFor(dir)).toEqual(before);
      const id = await createNote(first, 'still served');
      expect(
        (await send(first.urls.notes8080, { method: 'GET', path: `/notes/${id}` })).status,
      ).toBe(200);
    },
  );

  test('of two starts at once, exactly one runs and the other gets the same line', async () => {
    const dir = await dataDir();
    const outcomes = await Promise.allSettled([
      start({ dataDir: dir, env: EMBEDDED }),
      start({ dataDir: dir, env: EMBEDDED }),
    ]);
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.filter(
      (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
    );
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(String(losers[0]!.reason)).toMatch(
      /Another instance \(pid \d+, running since .*\) is using DATA_DIR=/,
    );
    expect(String(losers[0]!.reason)).not.toMatch(/\n\s+at /);
  });

  test('a start after a SIGKILLed instance takes its folder over and keeps its notes', async () => {
    const dir = await dataDir();
    const killed = await start({ dataDir: dir, env: EMBEDDED });
    const id = await createNote(killed, 'before the kill');
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect((await postgresProcessesFor(dir)).length).toBeGreaterThan(0);

    const next = await start({ dataDir: dir, env: EMBEDDED });
    expect(
      (await send(next.urls.notes8080, { method: 'GET', path: `/notes/${id}` })).json,
    ).toMatchObject({ title: 'before the kill' });
  });
});

describe('signals', () => {
  test.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    '%s to the process group of `npm start` stops everything within 10 s',
    async (signal) => {
      const dir = await dataDir();
      const server = await start({ dataDir: dir, env: EMBEDDED, form: 'npm', ownGroup: true });
      const all = await processesOf(server, dir);
      process.kill(-server.child.pid!, signal);
      await waitUntil(async () => all.every(isGone), 10_000);
      expect(server.output()).toContain('stopped');
    },
  );

  test(
    'Ctrl-C reaches the whole process group, yet the embedded ' +
      'database stops last: it still answers while the services drain',
    async () => {
      const dir = await dataDir();
      const server = await start({
        dataDir: dir,
        env: { ...EMBEDDED, SHUTDOWN_DRAIN_MS: '3000' },
        form: 'npm',
        ownGroup: true,
      });
      const id = await createNote(server, 'read during the drain');
      process.kill(-server.child.pid!, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await send(server.urls.notes8080, { method: 'GET', path: '/ready' })).toMatchObject({
        status: 503,
        json: { error: 'shutting down' },
      });
      expect(
        await send(server.urls.notes8080, { method: 'GET', path: `/notes/${id}` }),
      ).toMatchObject({ status: 200, json: { title: 'read during the drain' } });
      await server.exited;
      const lines = logLines(server.output());
      expect(lines.map((line) => line.msg)).toContain('stopped');
      // Nothing went wrong on the way: no pooled connection cut by a database stopping first.
      expect(lines.filter((line) => line.level >= 40)).toEqual([]);
    },
  );

  test('SIGTERM to npm alone stops the server and the database, the server exiting 0', async () => {
    const dir = await dataDir();
    const server = await start({ dataDir: dir, env: EMBEDDED, form: 'npm' });
    const all = await processesOf(server, dir);
    process.kill(server.child.pid!, 'SIGTERM');
    await waitUntil(async () => all.every(isGone), 10_000);
    expect(logLines(server.output()).map((line) => line.msg)).toContain('stopped');
  });

  test('when npm is killed, the server notices and stops everything', async () => {
    const dir = await dataDir();
    const server = await start({ dataDir: dir, env: EMBEDDED, form: 'npm' });
    const all = await processesOf(server, dir);
    process.kill(server.child.pid!, 'SIGKILL');
    await waitUntil(async () => all.every(isGone), 10_000);
  });
});

describe('a supervised embedded database', () => {
  test(
    'a SIGKILLed postmaster is started again within 5 s; ' +
      'requests fail fast meanwhile; no acknowledged note is lost',
    async () => {
      const dir = await dataDir();
      const server = await start({ dataDir: dir, env: EMBEDDED, form: 'source', ownGroup: false });
      const id = await createNote(server, 'acknowledged before the crash');
      expect((await send(server.urls.notes8080, { method: 'GET', path: '/ready' })).json).toEqual({
        status: 'ready',
      });

      const postmaster = Number(
        (await fs.readFile(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
      );
      process.kill(postmaster, 'SIGKILL');
      const during = await send(server.urls.notes8080, {
        method: 'GET',
        path: `/notes/${id}`,
        timeoutMs: 10_000,
      });
      expect([200, 500]).toContain(during.status);
      expect(during.ms).toBeLessThan(5_000);

      const back = await waitUntil(
        async () =>
          (await send(server.urls.notes8000, { method: 'GET', path: '/ready' })).status === 200,
        5_000,
      );
      expect(back).toBeLessThan(5_000);
      expect(
        (await send(server.urls.notes8080, { method: 'GET', path: `/notes/${id}` })).json,
      ).toMatchObject({ title: 'acknowledged before the crash' });
      expect(
        logLines(server.output()).some(
          (line) => line.msg === 'embedded PostgreSQL exited unexpectedly; starting it again',
        ),
      ).toBe(true);
    },
  );

  test(
    "GET /ready answers 503 in each service's shape while the database is cut off or " +
      'frozen (sessions in it included); /live and /health still say the process runs',
    async () => {
      const database = await createTestDatabase();
      // A relay in front of the database that can be cut or frozen, as a network or a
      // database outage does.
      const target = new URL(database.url);
      const relay = await startTcpRelay({ host: target.hostname, port: Number(target.port) });
      try {
        const server = await start({
          dataDir: await dataDir(),
          env: {
            DATABASE_URL: relay.through(database.url),
            DB_TIMEOUT_MS: '500',
            SESSION_STORE: 'postgres',
          },
        });
        for (const url of [server.urls.notes8080, server.urls.notes8000, server.urls.auth]) {
          expect((await send(url, { method: 'GET', path: '/ready' })).json).toEqual({
            status: 'ready',
          });
        }
        relay.cut();
        expect(await send(server.urls.notes8080, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { error: 'database unavailable' },
        });
        expect(await send(server.urls.notes8000, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { detail: 'database unavailable' },
        });
        expect(await send(server.urls.auth, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { error: 'database unavailable' },
        });
        expect(
          (await send(server.urls.notes8000, { method: 'GET', path: '/health' })).json,
        ).toEqual({
          status: 'healthy',
        });
        for (const url of [server.urls.notes8080, server.urls.notes8000, server.urls.auth]) {
          expect(await send(url, { method: 'GET', path: '/live' })).toMatchObject({
            status: 200,
            json: { status: 'live' },
          });
        }

        relay.restore();
        const urls = [server.urls.notes8080, server.urls.notes8000, server.urls.auth];
        const readiness = () =>
          Promise.all(
            urls.map((url) =>
              send(url, { method: 'GET', path: '/ready' }).then((reply) => reply.status),
            ),
          );
        for (const started = Date.now(); (await readiness()).some((status) => status !== 200);) {
          expect(Date.now() - started, 'ready again after the relay is restored').toBeLessThan(
            10_000,
          );
          await sleep(100);
        }
        // Frozen: connections held, no byte answered. Each check gives up after DB_TIMEOUT_MS (a
        // pooled connection's wait, then the statement's), not after the test's patience.
        relay.freeze();
        const frozenAt = performance.now();
        const answers = await Promise.all(
          urls.map((url) => send(url, { method: 'GET', path: '/ready', timeoutMs: 5_000 })),
        );
        expect(performance.now() - frozenAt).toBeLessThan(2 * 500 + 1_500);
        expect(answers.map(({ status, json }) => ({ status, json }))).toEqual([
          { status: 503, json: { error: 'database unavailable' } },
          { status: 503, json: { detail: 'database unavailable' } },
          { status: 503, json: { error: 'database unavailable' } },
        ]);
        for (const url of urls)
          expect(await send(url, { method: 'GET', path: '/live' })).toMatchObject({
            status: 200,
            json: { status: 'live' },
          });
      } finally {
        await relay.close();
        await database.drop();
      }
    },
  );

  test(
    'a stopping process answers GET /ready with 503 while it ' +
      'still serves for SHUTDOWN_DRAIN_MS, then stops cleanly',
    async () => {
      const database = await createTestDatabase();
      try {
        const server = await start({
          dataDir: await dataDir(),
          env: { DATABASE_URL: database.url, SHUTDOWN_DRAIN_MS: '3000' },
        });
        expect((await send(server.urls.notes8080, { method: 'GET', path: '/ready' })).status).toBe(
          200,
        );
        const stopped = server.stop();
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await send(server.urls.notes8080, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { error: 'shutting down' },
        });
        expect(await send(server.urls.notes8000, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { detail: 'shutting down' },
        });
        expect(await send(server.urls.auth, { method: 'GET', path: '/ready' })).toMatchObject({
          status: 503,
          json: { error: 'shutting down' },
        });
        expect((await send(server.urls.notes8080, { method: 'GET', path: '/notes' })).status).toBe(
          200,
        );
        expect((await send(server.urls.notes8080, { method: 'GET', path: '/live' })).status).toBe(
          200,
        );
        expect(await stopped).toBe(0);
      } finally {
        await database.drop();
      }
    },
  );
});

describe('start-up errors a person can read', () => {
  test(
    'invalid variables: one line each (name, value, what ' +
      'is expected), secrets not repeated, exit 1, no stack',
    async () => {
      const result = await runUntilExit({
        dataDir: await dataDir(),
        env: {
          NOTES8080_PORT: 'eighty',
          DB_POOL_MAX: '0',
          LOG_LEVEL: 'loud',
          AUTH_ADMIN_PASSWORD: 'secret-value',
          PASSWORD_HASH_COST: '1000',
        },
      });
      expect(result.code).toBe(1);
      expect(result.output.trim().split('\n').sort()).toEqual([
        'DB_POOL_MAX="0" is not valid: expected a whole number, at least 1',
        'LOG_LEVEL="loud" is not valid: expected one of ' +
          'fatal, error, warn, info, debug, trace, silent',
        'NOTES8080_PORT="eighty" is not valid: expected a port number from 0 to 65535',
        'PASSWORD_HASH_COST="1000" is not valid: expected a power of two',
      ]);
    },
  );

  test('a DATABASE_URL naming a missing database fails in under 5 s with one line', async () => {
    const url = new URL(postgresUrl());
    url.pathname = '/no_such_database';
    const result = await runUntilExit({
      dataDir: await dataDir(),
      env: { DATABASE_URL: url.toString() },
    });
    expect(result.code).toBe(1);
    expect(result.ms).toBeLessThan(5_000);
    const printed = result.output
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('{'));
    expect(printed).toEqual([
      expect.stringMatching(
        new RegExp(
          /^Cannot use the database no_such_database at 127\.0\.0\.1:\d+ /.source +
            /\(DATABASE_URL\): database "no_such_database" does not exist$/.source,
        ),
      ),
    ]);
    expect(result.output).not.toMatch(/\n\s+at /);
    expect(result.output).not.toContain(url.password || 'no password');
  });

  test(
    'an address in use names the service, the address ' +
      'and its variables; no service announces itself',
    async () => {
      // A port this test holds open itself.
      const busy = net.createServer();
      const port = await listenOnFreePort(busy, '127.0.0.1');
      try {
        const result = await runUntilExit({
          dataDir: await dataDir(),
          env: { ...EMBEDDED, NOTES8000_PORT: String(port) },
          form: 'compiled',
        });
        expect(result.code).toBe(1);
        expect(result.output).toContain(
          `notes8000 cannot listen on 127.0.0.1:${port} (NOTES8000_HOST, ` +
            `NOTES8000_PORT): the address is already in use`,
        );
        expect(result.output).not.toContain('listening on');
        expect(result.output).not.toMatch(/\n\s+at /);
      } finally {
        busy.close();
      }
    },
  );

  test('production mode with a weak password refuses in one line naming the variable', async () => {
    const result = await runUntilExit({
      dataDir: await dataDir(),
      env: {
        ...EMBEDDED,
        NODE_ENV: 'production',
        AUTH_USER_PASSWORD: 'admin-password',
        AUTH_ADMIN_PASSWORD: 'a-long-secret-2',
      },
      form: 'compiled',
    });
    expect(result.code).toBe(1);
    expect(result.output.trim()).toBe(
      'AUTH_USER_PASSWORD is a documented default password: production mode needs one of your own',
    );
  });
});

describe('start-up errors a person can read, in a copy of the repository', () => {
  test('SPA_MODE=prebuilt without a build: one line saying to build', async () => {
    await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'no-build-'));
    try {
      for (const entry of ['package.json', 'dist/builds', 'dist/server']) {
        await fs.cp(path.join(ROOT, entry), path.join(copy, entry), {
          recursive: true,
          verbatimSymlinks: true,
        });
      }
      await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
      const result = await runUntilExit({
        dataDir: await dataDir(),
        env: { ...EMBEDDED, SERVICES: 'auth', SPA_MODE: 'prebuilt' },
        form: 'compiled',
        cwd: copy,
      });
      expect(result.code).toBe(1);
      expect(result.output.trim()).toBe(
        `The pages are not built in ${path.join(copy, 'dist', 'web')}: run "npm run build" first`,
      );
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });
});

describe('scaling', () => {
  test(
    'SERVICES runs only the services named; the others ' +
      'do not listen and their schemas are untouched',
    async () => {
      const database = await createTestDatabase();
      try {
        const server = await start({
          dataDir: await dataDir(),
          env: { DATABASE_URL: database.url, SERVICES: 'notes8000' },
        });
        expect(Object.keys(server.urls)).toEqual(['notes8000']);
        expect((await send(server.urls.notes8000, { method: 'GET', path: '/health' })).status).toBe(
          200,
        );
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
      } finally {
        await database.drop();
      }
    },
  );
});

describe('the container image', () => {
  test(
    'runs the server as npm start does: plain Node on the ' +
      'compiled entry point, no runtime flags or allocator settings',
    async () => {
      const dockerfile = await fs.readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
      const start = await startScript();
      const command = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
      expect(command).toEqual(['node', start.entry]);
      expect(dockerfile).not.toMatch(/MALLOC_|--expose-gc|--max-semi-space|--heap-/);
    },
  );
});

describe('npm run migrate', () => {
  const migrate = (env: Record<string, string>, ...args: string[]) =>
    promisify(execFile)(
      'npm',
      ['run', '--silent', 'migrate', ...(args.length ? ['--', ...args] : [])],
      { cwd: ROOT, env: { ...process.env, ...env } },
    ).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (failure: { code: number; stdout: string; stderr: string }) => ({
        code: failure.code,
        output: failure.stdout + failure.stderr,
      }),
    );

  test("without DATABASE_URL, migrates DATA_DIR's embedded PostgreSQL and stops it", async () => {
    const dir = await dataDir();
    const result = await migrate({ DATABASE_URL: '', DATA_DIR: dir }, '--env', 'notes8080');
    expect(result).toEqual({
      code: 0,
      output: 'notes8080: schema notes8080 is at its latest migration\n',
    });
    expect(await postgresProcessesFor(dir)).toEqual([]);
  });

  test('migrate:make writes a migration of the service in the repository’s style', async () => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'make-migration-'));
    try {
      await fs.symlink(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
      const make = (...args: string[]) =>
        promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', path.join(ROOT, 'scripts', 'makeMigration.ts'), ...args],
          { cwd: folder },
        );
      const { stdout } = await make('notes8080', 'add_tags');
      const [written] = await fs.readdir(path.join(folder, 'migrations', 'notes8080'));
      expect(written).toMatch(/^\d{14}_add_tags\.ts$/);
      // After every migration the service has: knex runs them in the order of their names.
      const existing = await fs.readdir(path.join(ROOT, 'migrations', 'notes8080'));
      expect(existing.every((file) => file < written!)).toBe(true);
      expect(stdout).toBe(`wrote migrations/notes8080/${written}\n`);
      const text = await fs.readFile(
        path.join(folder, 'migrations', 'notes8080', written!),
        'utf8',
      );
      expect(text).toContain('export async function up(knex: Knex): Promise<void> {');
      expect(text).toContain('export async function down(knex: Knex): Promise<void> {');
      expect(text).not.toContain('server/');
      await expect(make('nothing', 'add_tags')).rejects.toMatchObject({
        stderr: expect.stringContaining('usage: npm run migrate:make <service> <name>'),
      });
    } finally {
      await fs.rm(folder, { recursive: true, force: true });
    }
  });

  test("with no flags migrates every service's schema; --env picks one", async () => {
    const database = await createTestDatabase();
    try {
      expect(await migrate({ DATABASE_URL: database.url }, '--env', 'notes8000')).toEqual({
        code: 0,
        output: 'notes8000: schema notes8000 is at its latest migration\n',
      });
      const all = await migrate({ DATABASE_URL: database.url });
      expect(all.code).toBe(0);
      expect(all.output).toContain('notes8080: schema notes8080 is at its latest migration');
      const tables = await withClient(database.url, (client) =>
        client.query<{ table_schema: string }>(
          `SELECT table_schema FROM information_schema.tables
            WHERE table_name = 'notes' ORDER BY 1`,
        ),
      );
      expect(tables.rows.map((row) => row.table_schema)).toEqual(['notes8000', 'notes8080']);
    } finally {
      await database.drop();
    }
  });
});

describe('logs', () => {
  test(
    'one JSON object per line when the output is not ' +
      'a terminal; LOG_FORMAT=pretty gives readable lines',
    async () => {
      const json = await start({ dataDir: await dataDir(), env: EMBEDDED });
      const lines = json.output().trim().split('\n');
      expect(lines.every((line) => line.startsWith('{'))).toBe(true);

      const pretty = await start({
        dataDir: await dataDir(),
        env: { ...EMBEDDED, LOG_FORMAT: 'pretty' },
      });
      expect(pretty.output()).toMatch(/INFO.*notes8080 listening on http:\/\/127\.0\.0\.1:\d+/);
      expect(pretty.output()).not.toMatch(/^\{/m);
    },
  );
});

describe('memory', () => {
  test(
    'a first start builds the pages outside the server ' +
      'process, which then holds what a warm start holds',
    async () => {
      // A copy of the repository without built pages, so that this start has to build them.
      await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
      const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'first-start-'));
      try {
        // dist/server is a relative link into dist/builds, where the compiled migrations sit beside
        // it.
        for (const entry of [
          'package.json',
          'vite.config.ts',
          'web',
          'dist/builds',
          'dist/server',
        ]) {
          await fs.cp(path.join(ROOT, entry), path.join(copy, entry), {
            recursive: true,
            verbatimSymlinks: true,
          });
        }
        await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
        const dir = await dataDir();
        const first = await start({ dataDir: dir, env: EMBEDDED, cwd: copy });
        await fs.access(path.join(copy, 'dist', 'web', 'index.html'));
        const maps = await fs.readFile(`/proc/${first.pid}/maps`, 'utf8');
        expect(maps).not.toMatch(/rollup/);
        const firstRss = await rssBytes(first.pid);
        await first.stop();
        const warm = await start({ dataDir: dir, env: EMBEDDED, cwd: copy });
        expect(firstRss).toBeLessThan((await rssBytes(warm.pid)) + 30 * 1024 * 1024);
      } finally {
        await fs.rm(copy, { recursive: true, force: true });
      }
    },
  );
});
