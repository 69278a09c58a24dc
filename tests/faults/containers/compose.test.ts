import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../../../harness/http.js';
import { ROOT } from '../../../harness/processes.js';

// The image and compose.yaml as an operator runs them: the Dockerfile built, then PostgreSQL, two
// replicas of each service and the reverse proxy in front, reached only through the proxy. Runs
// where a container engine answers (TEST_IMAGES=1, the container pass of .ci/run); the images
// stand in for the official ones through the variables the files declare.

const run = promisify(execFile);
const PROJECT = `services-test-${process.pid}`;
const IMAGE = `${PROJECT}:latest`;

/** `docker compose`, or the older `docker-compose` where the plugin is missing. */
let composeCommand: string[] = [];
let published: { notes8080: number; notes8000: number; auth: number };
let environment: NodeJS.ProcessEnv;

const docker = (...args: string[]) =>
  run('docker', args, { env: environment, maxBuffer: 64 * 2 ** 20 });
const compose = (...args: string[]) =>
  run(composeCommand[0]!, [...composeCommand.slice(1), '-p', PROJECT, ...args], {
    cwd: ROOT,
    env: environment,
    maxBuffer: 64 * 2 ** 20,
  });
const url = (service: keyof typeof published) => `http://127.0.0.1:${published[service]}`;

const psql = async (sql: string) =>
  (
    await compose('exec', '-T', 'postgres', 'psql', '-U', 'app', '-d', 'app', '-At', '-c', sql)
  ).stdout.trim();

beforeAll(async () => {
  composeCommand = await run('docker', ['compose', 'version']).then(
    () => ['docker', 'compose'],
    () => ['docker-compose', '--compatibility'],
  );
  environment = {
    ...process.env,
    APP_IMAGE: IMAGE,
    POSTGRES_IMAGE: process.env.TEST_POSTGRES_IMAGE ?? 'postgres:17',
    PROXY_IMAGE: process.env.TEST_PROXY_IMAGE ?? 'nginx:1.27',
    // Empty: the engine chooses the ports, read back once the proxy runs.
    PUBLISHED_NOTES8080: '',
    PUBLISHED_NOTES8000: '',
    PUBLISHED_AUTH: '',
  };
  const proxy = process.env.BUILD_PROXY
    ? [
        '--network',
        'host',
        '--build-arg',
        `HTTPS_PROXY=${process.env.BUILD_PROXY}`,
        '--build-arg',
        `HTTP_PROXY=${process.env.BUILD_PROXY}`,
      ]
    : [];
  const nodeImage = process.env.TEST_NODE_IMAGE
    ? ['--build-arg', `NODE_IMAGE=${process.env.TEST_NODE_IMAGE}`]
    : [];
  await docker('build', ...proxy, ...nodeImage, '-t', IMAGE, ROOT);
  await compose('up', '-d', '--no-build');
  const publishedPort = async (port: number) =>
    Number((await compose('port', 'proxy', String(port))).stdout.trim().split(':').at(-1));
  published = {
    notes8080: await publishedPort(8080),
    notes8000: await publishedPort(8000),
    auth: await publishedPort(3000),
  };
  // Ready once every service answers /ready through the proxy.
  const deadline = Date.now() + 120_000;
  for (const service of ['notes8080', 'notes8000', 'auth'] as const) {
    while (
      (
        await send(url(service), { method: 'GET', path: '/ready', timeoutMs: 2_000 }).catch(
          () => undefined,
        )
      )?.status !== 200
    ) {
      if (Date.now() > deadline)
        throw new Error(
          `${service} is not ready through the ` +
            `proxy:\n${(await compose('logs', '--tail', '30')).stdout}`,
        );
      await sleep(500);
    }
  }
}, 600_000);

afterAll(async () => {
  if (composeCommand.length > 0)
    await compose('down', '-v', '--remove-orphans').catch(() => undefined);
  await docker('image', 'rm', '-f', IMAGE).catch(() => undefined);
}, 120_000);

describe('the image', () => {
  test(
    'runs as a user other than root, with production dependencies only, and reports healthy',
    { timeout: 90_000 },
    async () => {
      const { stdout: user } = await compose('exec', '-T', 'notes8080', 'id', '-u');
      expect(user.trim()).not.toBe('0');
      const { stdout: modules } = await compose('exec', '-T', 'notes8080', 'ls', 'node_modules');
      expect(modules.split('\n')).not.toContain('vitest');
      expect(modules.split('\n')).toContain('koa');
      // Each replica's HEALTHCHECK (GET /live of its services) runs every 10 s.
      const health = async () => {
        const { stdout: ids } = await compose('ps', '-q', 'notes8080', 'notes8000', 'auth');
        const { stdout } = await docker(
          'inspect',
          '--format',
          '{{.State.Health.Status}}',
          ...ids.trim().split('\n'),
        );
        return stdout.trim().split('\n');
      };
      for (
        let waited = 0;
        (await health()).some((status) => status !== 'healthy') && waited < 60_000;
        waited += 1_000
      )
        await sleep(1_000);
      expect(await health()).toEqual(Array(6).fill('healthy'));
    },
  );
});

describe('the compose topology', () => {
  test('a session made through the proxy holds on every replica', async () => {
    const login = await send(url('auth'), {
      method: 'POST',
      path: '/api/login',
      json: { email: 'user@example.com', password: 'user-password' },
    });
    // The last lines of the proxy and the login service explain an answer it should not have had.
    const logs =
      login.status === 200 ? '' : (await compose('logs', '--tail', '40', 'proxy', 'auth')).stdout;
    expect(login.status, logs).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        send(url('auth'), {
          method: 'GET',
          path: '/api/me',
          headers: { cookie, connection: 'close' },
        }).then((reply) => reply.status),
      ),
    );
    expect(answers.every((status) => status === 200)).toBe(true);
    // Both replicas answered some of them.
    const { stdout: ids } = await compose('ps', '-q', 'auth');
    for (const id of ids.trim().split('\n')) {
      const { stdout, stderr } = await docker('logs', id);
      expect(`${stdout}${stderr}`).toContain('"path":"/api/me","status":200');
    }
    const logout = await send(url('auth'), {
      method: 'POST',
      path: '/api/logout',
      headers: { cookie },
    });
    expect(logout.status).toBe(200);
    const after = await Promise.all(
      Array.from({ length: 10 }, () =>
        send(url('auth'), {
          method: 'GET',
          path: '/api/me',
          headers: { cookie, connection: 'close' },
        }),
      ),
    );
    expect(after.map((reply) => reply.status)).toEqual(Array(10).fill(401));
  });

  test(
    "the proxy passes the client's request id on, or its own in place of " +
      'one the services would replace, and logs the id the answer carries',
    async () => {
      const kept = await send(url('notes8000'), {
        method: 'GET',
        path: '/health',
        headers: { 'x-request-id': 'client-trace-7f3a' },
      });
      expect(kept.headers['x-request-id']).toBe('client-trace-7f3a');
      const replaced = await send(url('notes8000'), {
        method: 'GET',
        path: '/health',
        headers: { 'x-request-id': 'x'.repeat(129) },
      });
      const made = String(replaced.headers['x-request-id']);
      // nginx's $request_id: 32 hexadecimal digits.
      expect(made).toMatch(/^[0-9a-f]{32}$/);
      let logs = '';
      for (
        let waited = 0;
        waited < 10_000 && !(logs.includes('client-trace-7f3a') && logs.includes(made));
        waited += 250
      ) {
        await sleep(250);
        logs = (await compose('logs', 'proxy')).stdout;
      }
      expect(logs).toContain('"GET /health HTTP/1.1" 200');
      expect(logs).toContain('client-trace-7f3a');
      expect(logs).toContain(made);
    },
  );

  test(
    'a replica killed while notes are written loses no ' +
      'acknowledged write, and the proxy stops sending to it',
    async () => {
      const acknowledged: string[] = [];
      const failures: { sentAt: number; answer: number | string }[] = [];
      let killedAt = 0;
      let writing = true;
      const writer = async (client: number) => {
        for (let n = 0; writing; n++) {
          const title = `w${client}-${n}`;
          const sentAt = performance.now();
          const reply = await send(url('notes8080'), {
            method: 'POST',
            path: '/notes',
            json: { title, body: 'x' },
            timeoutMs: 10_000,
          }).catch((error: Error) => error.message);
          if (typeof reply !== 'string' && reply.status === 201) acknowledged.push(title);
          else failures.push({ sentAt, answer: typeof reply === 'string' ? reply : reply.status });
        }
      };
      const writers = Array.from({ length: 4 }, (_, client) => writer(client));
      await sleep(2_000);
      const { stdout: ids } = await compose('ps', '-q', 'notes8080');
      killedAt = performance.now();
      await docker('kill', ids.trim().split('\n')[0]!);
      await sleep(5_000);
      writing = false;
      await Promise.all(writers);

      expect(acknowledged.length).toBeGreaterThan(50);
      const stored = new Set(
        (await psql("SELECT title FROM notes8080.notes WHERE title LIKE 'w%'")).split('\n'),
      );
      expect(acknowledged.filter((title) => !stored.has(title))).toEqual([]);
      // A write cut mid-way by the kill fails (a POST is never sent twice); one that could not
      // reach the dead replica is sent to the other. Once the connect timeout (2 s) and a second
      // more have passed, the proxy has stopped choosing the dead replica: every write sent later
      // succeeds. (Failures before that are listed in the message, not counted: their number
      // depends on how loaded the machine is.)
      const fromKill = failures.map(({ sentAt, answer }) => ({
        sentMsAfterKill: Math.round(sentAt - killedAt),
        answer,
      }));
      expect(
        fromKill.filter(({ sentMsAfterKill }) => sentMsAfterKill > 3_000),
        JSON.stringify(fromKill),
      ).toEqual([]);
    },
    60_000,
  );
});
