import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { startTcpRelay } from '../../harness/tcpRelay.js';
import { createTestDatabase } from '../support/services.js';

// Readiness, as load balancers and Kubernetes read it: /ready says whether the database answers,
// /live only that the process runs, so that an outage takes replicas out of rotation without
// restarting them.

const running: RunningProcess[] = [];
const dataDirs: string[] = [];

async function dataDir(): Promise<string> {
  const dir = await temporaryDataDir();
  dataDirs.push(dir);
  return dir;
}

async function start(options: Parameters<typeof startProcess>[0]): Promise<RunningProcess> {
  const started = await startProcess({ form: 'compiled', ...options });
  running.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(5_000)));
  await Promise.all(dataDirs.splice(0).map(removeDataDir));
});

describe('readiness', () => {
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
});
