import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { send } from '../../harness/http.js';
import { removeDataDir, temporaryDataDir, withClient } from '../../harness/postgres.js';
import type { ScratchDatabase } from '../../harness/postgres.js';
import { ROOT, runUntilExit, startProcess } from '../../harness/processes.js';
import { commandLine, descendants, isAlive, postgresProcessesFor } from '../../harness/procfs.js';
import { createTestDatabase } from '../support/services.js';

// The commands besides `npm start`: the migrations by hand, a new migration, the image's health
// check, a `.env` that each of them reads (or cannot use), and `npm test` itself.

let dataDir: string;
let database: ScratchDatabase;
/** A folder with the compiled entry points as `dist/`, where a test may write a `.env`. */
let folder: string;

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  dataDir = await temporaryDataDir();
  database = await createTestDatabase();
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'commands-'));
  await fs.symlink(path.join(ROOT, 'dist'), path.join(folder, 'dist'));
});
afterAll(async () => {
  await database.drop();
  await removeDataDir(dataDir);
  await fs.rm(folder, { recursive: true, force: true });
});

/** How a command ended (0, or its exit code) and everything it printed. */
const outcome = (
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
) =>
  promisify(execFile)(command, args, options).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (failure: { code: number; stdout: string; stderr: string }) => ({
      code: failure.code,
      output: failure.stdout + failure.stderr,
    }),
  );
const migrate = (env: Record<string, string>, ...args: string[]) =>
  outcome('npm', ['run', '--silent', 'migrate', ...(args.length ? ['--', ...args] : [])], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
/** A compiled entry point run in the test's folder, with no configuration in its environment. */
const runCompiled = (entry: string, ...args: string[]) =>
  outcome(process.execPath, [path.join('dist', 'server', entry), ...args], {
    cwd: folder,
    env: { PATH: process.env.PATH },
  });
const latest = (service: string) => ({
  code: 0,
  output: `${service}: schema ${service} is at its latest migration\n`,
});

describe('npm run migrate', () => {
  test("migrates every service's schema, or the one --env names", async () => {
    const { url } = database;
    expect(await migrate({ DATABASE_URL: url }, '--env', 'notes8000')).toEqual(latest('notes8000'));
    const all = await migrate({ DATABASE_URL: url });
    expect(all.code).toBe(0);
    expect(all.output).toContain(latest('notes8080').output);
    const tables = await withClient(url, (client) =>
      client.query(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'notes' ORDER BY 1",
      ),
    );
    expect(tables.rows).toEqual([{ table_schema: 'notes8000' }, { table_schema: 'notes8080' }]);
  });

  test("without DATABASE_URL, migrates DATA_DIR's embedded PostgreSQL and stops it", async () => {
    const dir = await temporaryDataDir();
    try {
      expect(await migrate({ DATABASE_URL: '', DATA_DIR: dir }, '--env', 'notes8080')).toEqual(
        latest('notes8080'),
      );
      expect(await postgresProcessesFor(dir)).toEqual([]);
    } finally {
      await removeDataDir(dir);
    }
  });

  test('migrate:make writes a migration of the service in the repository’s style', async () => {
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'make-migration-'));
    try {
      await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
      const make = (...args: string[]) =>
        promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', path.join(ROOT, 'scripts', 'makeMigration.ts'), ...args],
          { cwd: copy },
        );
      const { stdout } = await make('notes8080', 'add_tags');
      const [written] = await fs.readdir(path.join(copy, 'migrations', 'notes8080'));
      expect(written).toMatch(/^\d{14}_add_tags\.ts$/);
      expect(stdout).toBe(`wrote migrations/notes8080/${written}\n`);
      // After every migration the service has: knex runs them in the order of their names.
      const existing = await fs.readdir(path.join(ROOT, 'migrations', 'notes8080'));
      expect(existing.every((file) => file < written!)).toBe(true);
      const text = await fs.readFile(path.join(copy, 'migrations', 'notes8080', written!), 'utf8');
      expect(text).toContain('export async function up(knex: Knex): Promise<void> {');
      expect(text).toContain('export async function down(knex: Knex): Promise<void> {');
      expect(text).not.toContain('server/');
      await expect(make('nothing', 'add_tags')).rejects.toMatchObject({
        stderr: expect.stringContaining('usage: npm run migrate:make <service> <name>'),
      });
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });
});

describe('a .env in the working folder', () => {
  test(
    'the server, its health check and the migrations ' + 'command read it; the environment wins',
    async () => {
      const dotEnv = path.join(folder, '.env');
      await fs.writeFile(
        dotEnv,
        '# allowed names\nNOTES8080_ALLOWED_HOSTS=notes.example\n\n' +
          'export NOTES8000_ALLOWED_HOSTS="eight.example"\nSERVICES=notes8080\n',
      );
      const server = await startProcess({
        dataDir,
        form: 'compiled',
        cwd: folder,
        env: { DATABASE_URL: database.url, SERVICES: 'notes8080,notes8000' },
      });
      try {
        const live = async (service: 'notes8080' | 'notes8000', host?: string) => {
          const url = server.urls[service];
          const headers = { host: host ?? new URL(url).host };
          return (await send(url, { method: 'GET', path: '/live', headers })).status;
        };
        expect(await live('notes8080', 'notes.example')).toBe(200);
        expect(await live('notes8080')).toBe(400);
        expect(await live('notes8000', 'eight.example')).toBe(200);
        expect(await live('notes8000')).toBe(400);

        // The health check's own variables, in .env alone: where to ask, and the Host it may name.
        const { port } = new URL(server.urls.notes8080);
        const healthEnv = (host: string) =>
          `SERVICES=notes8080\nNOTES8080_HOST=127.0.0.1\nNOTES8080_PORT=${port}\n` +
          `NOTES8080_ALLOWED_HOSTS=${host}\n`;
        await fs.writeFile(dotEnv, healthEnv('notes.example'));
        expect(await runCompiled('healthcheck.js')).toEqual({ code: 0, output: '' });
        await fs.writeFile(dotEnv, healthEnv('elsewhere.example'));
        expect(await runCompiled('healthcheck.js')).toEqual({
          code: 1,
          output: 'notes8080: GET /live answered 400\n',
        });
      } finally {
        await server.stop(5_000);
      }
      await fs.writeFile(dotEnv, `DATABASE_URL=${database.url}\n`);
      expect(await runCompiled('migrate.js', '--env', 'notes8000')).toEqual(latest('notes8000'));
    },
  );
});

describe('a .env that cannot be used', () => {
  const dotEnv = () => path.join(folder, '.env');
  const unusable = (line: number) =>
    `${dotEnv()}, line ${line}: expected NAME=value, a # comment or a blank line\n`;
  /** The compiled server's start in the folder: how it ended and what it printed. */
  const start = () => runUntilExit({ dataDir, env: {}, form: 'compiled', cwd: folder });

  test.each([
    [
      'a line that is no assignment: the line named, its text not repeated',
      'LOG_LEVEL=warn\nAUTH_ADMIN_PASSWORD secret-value\n',
      2,
    ],
    ['a space before the =, refused as a shell would refuse it', 'AUTH_PORT = 13000\n', 1],
  ])('%s: the server and the migrations command say so in one line', async (_, text, line) => {
    await fs.writeFile(dotEnv(), text);
    expect(await start()).toMatchObject({ code: 1, output: unusable(line) });
    expect(await runCompiled('migrate.js')).toEqual({ code: 1, output: unusable(line) });
  });

  test('a .env that cannot be read', async () => {
    await fs.rm(dotEnv(), { force: true });
    await fs.mkdir(dotEnv());
    expect(await start()).toMatchObject({
      code: 1,
      output: `${dotEnv()} cannot be read: EISDIR: illegal operation on a directory, read\n`,
    });
    await fs.rm(dotEnv(), { recursive: true });
  });
});

describe('npm test', () => {
  /** `npm test` on `files`, run inside this run, as a developer or CI runs it. */
  function npmTest(files: string[], env: Record<string, string>) {
    // A temporary folder of its own (that the embedded PostgreSQL's user may pass), to see what
    // the run leaves there.
    const temporary = mkdtempSync(path.join(os.tmpdir(), 'npm-test-'));
    chmodSync(temporary, 0o755);
    onTestFinished(() => fs.rm(temporary, { recursive: true, force: true }));
    const child = spawn('npm', ['test', '--', ...files], {
      cwd: ROOT,
      env: { ...process.env, ...env, TMPDIR: temporary },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | string>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
    );
    // Node's compile cache, which npm turns on there, is Node's to keep between runs.
    const left = async () =>
      (await fs.readdir(temporary)).filter((name) => name !== 'node-compile-cache');
    return { pid: child.pid!, exited, output: () => output, left };
  }

  test('stopped by SIGTERM mid-run, leaves no process and no folder of it behind', async () => {
    const run = npmTest(['tests/metrics.test.ts'], { TEST_DB: 'embedded' });
    // Mid-run: once a test has started a server.
    let started: number[] = [];
    await expect
      .poll(
        async () => {
          started = descendants(run.pid);
          const commands = await Promise.all(started.map(commandLine));
          return commands.some((command) => command.join(' ').includes('dist/server/main.js'));
        },
        { timeout: 90_000, interval: 200 },
      )
      .toBe(true);
    process.kill(run.pid, 'SIGTERM');
    expect(await run.exited).not.toBe(0);
    await expect.poll(() => started.filter(isAlive), { timeout: 10_000 }).toEqual([]);
    expect(await run.left()).toEqual([]);
  });

  test('says first, in one line, why a forced TEST_DB=testcontainers cannot start', async () => {
    const run = npmTest(['tests/notes8000/notes.test.ts'], {
      TEST_DB: 'testcontainers',
      DOCKER_HOST: 'unix:///nonexistent.sock',
    });
    expect(await run.exited).toBe(1);
    const lines = run
      .output()
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('>') && !/ RUN /.test(line));
    expect(lines[0]).toMatch(/^The tests' PostgreSQL from testcontainers could not start/);
    expect(run.output()).not.toContain('No test files found');
    expect(await run.left()).toEqual([]);
  });
});
