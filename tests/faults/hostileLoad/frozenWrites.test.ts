import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres } from '../../../server/db/embeddedPostgres.js';
import { createLogger } from '../../../server/logger.js';
import { send, type Reply } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import type { RunningProcess } from '../../../harness/processes.js';
import { databaseProcesses } from '../../../harness/procfs.js';
import {
  NOTES_SERVICES,
  range,
  startServices,
  TEXT_FIELD,
  type NotesService,
} from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks } from '../../support/checks.js';

/** The key of an error body, per service. */
const ERROR_KEY = { notes8080: 'error', notes8000: 'detail' } as const;

/** A 500 in the service's own error shape: one string under `error` (8080) or `detail` (8000). */
function isShaped500(
  service: NotesService,
  reply: Pick<Reply, 'status' | 'json'> | undefined,
): boolean {
  if (reply?.status !== 500 || typeof reply.json !== 'object' || reply.json === null) return false;
  const body = reply.json as Record<string, unknown>;
  return Object.keys(body).length === 1 && typeof body[ERROR_KEY[service]] === 'string';
}

describe('6. Hostile load: writes while the database is frozen', () => {
  const dataDir = useTemporaryDataDir();

  const FREEZE_CYCLES = 3;
  const ANSWER_WITHIN_MS = 5_000;

  test(
    `writes while the database is frozen, ${FREEZE_CYCLES} times: each answers ` +
      `500 within 5 s, a 500 never wrote, a keyed retry creates exactly one note`,
    async () => {
      // Frozen and thawed, this PostgreSQL is the test's own: the suite's shared one must keep
      // running.
      const database = await startEmbeddedPostgres({
        dataDir: dataDir(),
        logger: createLogger('warn'),
        durable: false,
      });
      onTestFinished(() => database.stop());
      const services = await startServices(dataDir(), { DATABASE_URL: database.url });
      const seeded = await Promise.all(
        NOTES_SERVICES.map(
          async (service) =>
            (
              await send(services.urls[service], {
                method: 'POST',
                path: '/notes',
                json: { title: 'warm-up', [TEXT_FIELD[service]]: 'x' },
              })
            ).json as { id: number },
        ),
      );

      const writes: FrozenWrite[] = [];
      for (let cycle = 1; cycle <= FREEZE_CYCLES; cycle++) {
        // Pooled connections ready, so that the writes go out on them and sit in the frozen
        // server's buffers.
        await Promise.all(
          NOTES_SERVICES.flatMap((service, index) =>
            range(4).map(() =>
              send(services.urls[service], { method: 'GET', path: `/notes/${seeded[index]!.id}` }),
            ),
          ),
        );
        writes.push(...(await freezeCycle(services, cycle)));
      }

      const counts = await withClient(database.url, async (client) => {
        const count = async (service: NotesService, title: string) =>
          (
            await client.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM ${service}.notes WHERE title = $1`,
              [title],
            )
          ).rows[0]!.n;
        const counted = [];
        for (const write of writes)
          counted.push({ ...write, stored: await count(write.service, write.title) });
        return counted;
      });
      const keyed = counts.filter((write) => write.key);

      const checks = {
        "every write during the freeze answered 500 in the service's shape": counts.every((write) =>
          isShaped500(write.service, write.frozen),
        ),
        'each within 5 s': counts.every((write) => write.frozenMs <= ANSWER_WITHIN_MS),
        'every keyed retry after the thaw answered 201': keyed.every(
          (write) => write.retried?.status === 201,
        ),
        'exactly one note per keyed title': keyed.every((write) => write.stored === 1),
        'the process kept running': services.child.exitCode === null,
      };
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    120_000,
  );

  interface FrozenWrite {
    service: NotesService;
    title: string;
    key?: string;
    frozen?: Reply;
    frozenMs: number;
    retried?: Reply;
  }

  /**
   * One freeze: the writes sent while every PostgreSQL process is stopped, the keyed ones sent
   * again after the thaw.
   */
  async function freezeCycle(services: RunningProcess, cycle: number): Promise<FrozenWrite[]> {
    const writes: FrozenWrite[] = NOTES_SERVICES.flatMap((service) => [
      { service, title: `keyed ${cycle}`, key: `freeze-${cycle}-${service}`, frozenMs: NaN },
      { service, title: `unkeyed ${cycle}`, frozenMs: NaN },
    ]);
    const post = (write: FrozenWrite) =>
      send(services.urls[write.service], {
        method: 'POST',
        path: '/notes',
        json: {
          title: write.title,
          [TEXT_FIELD[write.service]]: `sent while frozen, cycle ${cycle}`,
        },
        headers: write.key ? { 'idempotency-key': write.key } : {},
        timeoutMs: 30_000,
      });
    const frozen = await databaseProcesses(dataDir());
    try {
      frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
      await Promise.all(
        writes.map(async (write) => {
          const startedAt = performance.now();
          write.frozen = await post(write).catch(() => undefined);
          write.frozenMs = performance.now() - startedAt;
        }),
      );
    } finally {
      frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
    }
    await sleep(2_000);
    await Promise.all(
      writes
        .filter((write) => write.key)
        .map(async (write) => void (write.retried = await post(write).catch(() => undefined))),
    );
    return writes;
  }
});
