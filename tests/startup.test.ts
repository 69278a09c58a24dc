import { describe, expect, test } from 'vitest';
import { postgresProcessesFor, startServices, useTemporaryDataDir } from './support/process.js';

// What `npm start` promises a newcomer: with no DATABASE_URL, an embedded PostgreSQL keeps the
// notes in DATA_DIR across restarts, and SIGTERM or SIGINT leaves no database process behind.
describe('npm start with the embedded PostgreSQL', () => {
  const dataDir = useTemporaryDataDir();

  // Compiled first, then from source (as `npm run dev` and the knex CLI run): both forms must
  // agree on the migrations already applied.
  test('serves all three services, keeps notes across a restart, and stops cleanly', async () => {
    const first = await startServices({ dataDir: dataDir(), env: { DATABASE_URL: '' }, form: 'compiled' });
    expect(first.output()).toMatch(/notes-8080 listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(first.output()).toMatch(/notes-8000 listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(first.output()).toMatch(/auth listening on http:\/\/127\.0\.0\.1:\d+/);

    const created = await fetch(`${first.urls.notes8080}/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'kept', body: 'across restarts' }),
    });
    expect(created.status).toBe(201);
    const note = (await created.json()) as { id: number };
    const health = await fetch(`${first.urls.notes8000}/health`);
    expect(await health.json()).toEqual({ status: 'healthy' });
    const login = await fetch(`${first.urls.auth}/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('lang="ja"');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);

    const second = await startServices({ dataDir: dataDir(), env: { DATABASE_URL: '' } });
    const again = await fetch(`${second.urls.notes8080}/notes/${note.id}`);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: note.id, title: 'kept', body: 'across restarts' });

    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);
  }, 180_000);

  test('starts cleanly over a PostgreSQL left running by a killed process', async () => {
    const killed = await startServices({ dataDir: dataDir(), env: { DATABASE_URL: '' } });
    const created = await fetch(`${killed.urls.notes8000}/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'before the kill', content: 'x' }),
    });
    expect(created.status).toBe(201);
    const note = (await created.json()) as { id: number };
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect((await postgresProcessesFor(dataDir())).length).toBeGreaterThan(0);

    const next = await startServices({ dataDir: dataDir(), env: { DATABASE_URL: '' } });
    const read = await fetch(`${next.urls.notes8000}/notes/${note.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ title: 'before the kill', content: 'x' });

    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    expect(await postgresProcessesFor(dataDir())).toEqual([]);
  }, 180_000);
});
