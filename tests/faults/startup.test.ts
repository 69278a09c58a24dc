import { afterEach, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import {
  postgresProcessesFor,
  startProcess,
  type RunningProcess,
} from '../../harness/processes.js';
import { useTemporaryDataDir } from '../support/services.js';

// What `npm start` promises a newcomer: with no DATABASE_URL, an embedded PostgreSQL keeps the
// notes in DATA_DIR across restarts, and SIGTERM or SIGINT leaves no database process behind.
describe('npm start with the embedded PostgreSQL', () => {
  const dataDir = useTemporaryDataDir();
  const running: RunningProcess[] = [];
  /** The entry point on the embedded PostgreSQL of this file's data folder. */
  const start = async (form: 'source' | 'compiled') => {
    const started = await startProcess({ dataDir: dataDir(), env: { DATABASE_URL: '' }, form });
    running.push(started);
    return started;
  };
  // A test that fails half-way leaves no server behind for the next one (stop() is a no-op once it
  // has ended).
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop(5_000)));
  });

  // Compiled first, then from source (as the tests and the knex CLI run): both forms must
  // agree on the migrations already applied.
  test('serves all three services, keeps notes across a restart, and stops cleanly', async () => {
    const first = await start('compiled');
    expect(first.output()).toMatch(/notes8080 listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(first.output()).toMatch(/notes8000 listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(first.output()).toMatch(/auth listening on http:\/\/127\.0\.0\.1:\d+/);

    const created = await send(first.urls.notes8080, {
      method: 'POST',
      path: '/notes',
      json: { title: 'kept', body: 'across restarts' },
    });
    expect(created.status).toBe(201);
    const note = created.json as { id: number };
    const health = await send(first.urls.notes8000, { method: 'GET', path: '/health' });
    expect(health.json).toEqual({ status: 'healthy' });
    const login = await send(first.urls.auth, { method: 'GET', path: '/login' });
    expect(login.status).toBe(200);
    expect(login.text).toContain('lang="ja"');

    expect(await first.stop()).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);

    const second = await start('source');
    const again = await send(second.urls.notes8080, { method: 'GET', path: `/notes/${note.id}` });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: note.id, title: 'kept', body: 'across restarts' });

    // Ctrl-C in the terminal: SIGINT, which must stop everything as SIGTERM does.
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);
  }, 180_000);

  test('starts cleanly over a PostgreSQL left running by a killed process', async () => {
    const killed = await start('source');
    const created = await send(killed.urls.notes8000, {
      method: 'POST',
      path: '/notes',
      json: { title: 'before the kill', content: 'x' },
    });
    expect(created.status).toBe(201);
    const note = created.json as { id: number };
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect((await postgresProcessesFor(dataDir())).length).toBeGreaterThan(0);

    const next = await start('source');
    const read = await send(next.urls.notes8000, { method: 'GET', path: `/notes/${note.id}` });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ title: 'before the kill', content: 'x' });

    expect(await next.stop()).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);
  }, 180_000);
});
