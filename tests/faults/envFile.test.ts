import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import {
  removeDataDir,
  ROOT,
  runUntilExit,
  startProcess,
  temporaryDataDir,
  type RunningProcess,
} from '../../harness/processes.js';
import type { ScratchDatabase } from '../../harness/postgres.js';
import { createTestDatabase } from '../support/services.js';

// The working folder's `.env`, read by every entry point (the server, its health check, the
// migrations command) over real processes started in a folder of their own. The variable it sets
// here, NOTES8080_ALLOWED_HOSTS, shows in every answer: a request naming another Host answers 400.

let folder: string;
let dataDir: string;
let database: ScratchDatabase;
const running: RunningProcess[] = [];

beforeAll(async () => {
  // The compiled entry points, as `npm start` compiles them, reached from the folder as
  // `dist/server/…`.
  await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'env-file-'));
  await fs.symlink(path.join(ROOT, 'dist'), path.join(folder, 'dist'));
  dataDir = await temporaryDataDir();
  database = await createTestDatabase();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(5_000)));
  await fs.rm(path.join(folder, '.env'), { recursive: true, force: true });
});

afterAll(async () => {
  await database.drop();
  await removeDataDir(dataDir);
  await fs.rm(folder, { recursive: true, force: true });
});

const writeEnvFile = (text: string) => fs.writeFile(path.join(folder, '.env'), text);

/** The 8080 notes service alone, compiled, started in the test's folder on the test's database. */
async function start(env: Record<string, string> = {}): Promise<RunningProcess> {
  const server = await startProcess({
    dataDir,
    form: 'compiled',
    cwd: folder,
    env: { DATABASE_URL: database.url, SERVICES: 'notes8080', ...env },
  });
  running.push(server);
  return server;
}

const live = (server: RunningProcess, host: string) =>
  send(server.urls.notes8080, { method: 'GET', path: '/live', headers: { host } });

describe('a .env in the working folder', () => {
  test('sets what the environment does not: the service answers only its hosts', async () => {
    await writeEnvFile(
      '# allowed names\nNOTES8080_ALLOWED_HOSTS=notes.example\n\nexport LOG_LEVEL="warn"\n',
    );
    const server = await start();
    expect(await live(server, 'notes.example')).toMatchObject({
      status: 200,
      json: { status: 'live' },
    });
    expect(await live(server, new URL(server.urls.notes8080).host)).toMatchObject({
      status: 400,
      json: { error: 'Invalid Host header' },
    });
  });

  test('a variable set in the environment wins over the same one in .env', async () => {
    await writeEnvFile('NOTES8080_ALLOWED_HOSTS=notes.example\n');
    const server = await start({ NOTES8080_ALLOWED_HOSTS: 'other.example' });
    expect(await live(server, 'other.example')).toMatchObject({ status: 200 });
    expect(await live(server, 'notes.example')).toMatchObject({
      status: 400,
      json: { error: 'Invalid Host header' },
    });
  });

  test('the health check reads it too', async () => {
    await writeEnvFile('NOTES8080_ALLOWED_HOSTS=notes.example\n');
    const server = await start();
    const { port } = new URL(server.urls.notes8080);
    // The health check's own variables, in .env alone: where to ask, and the Host it may name.
    await writeEnvFile(
      `SERVICES=notes8080\nNOTES8080_HOST=127.0.0.1\n` +
        `NOTES8080_PORT=${port}\nNOTES8080_ALLOWED_HOSTS=notes.example\n`,
    );
    expect(await runCompiled('healthcheck.js')).toEqual({ code: 0, output: '' });
    await writeEnvFile(
      `SERVICES=notes8080\nNOTES8080_HOST=127.0.0.1\n` +
        `NOTES8080_PORT=${port}\nNOTES8080_ALLOWED_HOSTS=elsewhere.example\n`,
    );
    expect(await runCompiled('healthcheck.js')).toEqual({
      code: 1,
      output: 'notes8080: GET /live answered 400\n',
    });
  });

  test('the migrations command takes DATABASE_URL from it', async () => {
    await writeEnvFile(`DATABASE_URL=${database.url}\n`);
    expect(await runCompiled('migrate.js', '--env', 'notes8000')).toEqual({
      code: 0,
      output: 'notes8000: schema notes8000 is at its latest migration\n',
    });
  });
});

describe('a .env that cannot be used stops the start in one line, exit 1', () => {
  test('a line that is no assignment: the line named, its text not repeated', async () => {
    await writeEnvFile('LOG_LEVEL=warn\nAUTH_ADMIN_PASSWORD secret-value\n');
    const result = await runUntilExit({
      dataDir,
      form: 'compiled',
      cwd: folder,
      env: { DATABASE_URL: database.url },
    });
    expect(result.code).toBe(1);
    expect(result.output).toBe(
      `${path.join(folder, '.env')}, line 2: expected NAME=value, a # comment or a blank line\n`,
    );
  });

  test('a .env that cannot be read', async () => {
    await fs.mkdir(path.join(folder, '.env'));
    const result = await runUntilExit({
      dataDir,
      form: 'compiled',
      cwd: folder,
      env: { DATABASE_URL: database.url },
    });
    expect(result.code).toBe(1);
    expect(result.output).toBe(
      `${path.join(folder, '.env')} cannot be read: ` +
        `EISDIR: illegal operation on a directory, read\n`,
    );
  });

  test('a space before the = is refused, as a shell would refuse it', async () => {
    await writeEnvFile('AUTH_PORT = 13000\n');
    expect(await runCompiled('migrate.js')).toEqual({
      code: 1,
      output:
        `${path.join(folder, '.env')}, line 1: expected ` +
        `NAME=value, a # comment or a blank line\n`,
    });
  });

  test('the migrations command says the same', async () => {
    await writeEnvFile('DATABASE_URL\n');
    expect(await runCompiled('migrate.js')).toEqual({
      code: 1,
      output:
        `${path.join(folder, '.env')}, line 1: expected ` +
        `NAME=value, a # comment or a blank line\n`,
    });
  });
});

/** A compiled entry point run in the test's folder, with no configuration in its environment. */
function runCompiled(entry: string, ...args: string[]): Promise<{ code: number; output: string }> {
  return promisify(execFile)(process.execPath, [path.join('dist', 'server', entry), ...args], {
    cwd: folder,
    env: { PATH: process.env.PATH },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (failure: { code: number; stdout: string; stderr: string }) => ({
      code: failure.code,
      output: failure.stdout + failure.stderr,
    }),
  );
}
