import { describe, expect, onTestFinished, test } from 'vitest';
import { send } from '../../harness/http.js';
import { startProcess } from '../../harness/processes.js';
import { startTcpRelay } from '../../harness/tcpRelay.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';

// Readiness, as load balancers and Kubernetes read it: /ready says whether the database answers,
// /live only that the process runs, so that an outage takes replicas out of rotation without
// restarting them.

const get = (url: string, path: string, timeoutMs?: number) =>
  send(url, { method: 'GET', path, timeoutMs }).then(({ status, json }) => ({ status, json }));
const unavailable = [
  { status: 503, json: { error: 'database unavailable' } },
  { status: 503, json: { detail: 'database unavailable' } },
  { status: 503, json: { error: 'database unavailable' } },
];

describe('readiness', () => {
  const dataDir = useTemporaryDataDir();

  test(
    "GET /ready answers 503 in each service's shape while the database is cut off or " +
      'frozen (sessions in it included); /live and /health still say the process runs',
    async () => {
      const database = await createTestDatabase();
      onTestFinished(database.drop);
      // A relay in front of the database that can be cut or frozen, as a network or a
      // database outage does.
      const target = new URL(database.url);
      const relay = await startTcpRelay({ host: target.hostname, port: Number(target.port) });
      onTestFinished(relay.close);
      const server = await startProcess({
        form: 'compiled',
        dataDir: dataDir(),
        env: {
          DATABASE_URL: relay.through(database.url),
          DB_TIMEOUT_MS: '500',
          SESSION_STORE: 'postgres',
        },
      });
      onTestFinished(async () => void (await server.stop(5_000)));
      const urls = [server.urls.notes8080, server.urls.notes8000, server.urls.auth];
      const each = (path: string, timeoutMs?: number) =>
        Promise.all(urls.map((url) => get(url, path, timeoutMs)));
      const live = Array(3).fill({ status: 200, json: { status: 'live' } });

      expect(await each('/ready')).toEqual(
        Array(3).fill({ status: 200, json: { status: 'ready' } }),
      );
      relay.cut();
      expect(await each('/ready')).toEqual(unavailable);
      expect(await get(server.urls.notes8000, '/health')).toEqual({
        status: 200,
        json: { status: 'healthy' },
      });
      expect(await each('/live')).toEqual(live);

      relay.restore();
      await expect
        .poll(async () => (await each('/ready')).map(({ status }) => status), {
          timeout: 10_000,
          interval: 100,
          message: 'ready again after the relay is restored',
        })
        .toEqual([200, 200, 200]);
      // Frozen: connections held, no byte answered. Each check gives up after DB_TIMEOUT_MS (a
      // pooled connection's wait, then the statement's), not after the test's patience.
      relay.freeze();
      const frozenAt = performance.now();
      expect(await each('/ready', 5_000)).toEqual(unavailable);
      expect(performance.now() - frozenAt).toBeLessThan(2 * 500 + 1_500);
      expect(await each('/live')).toEqual(live);
    },
  );
});
