import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres } from '../../../server/db/embeddedPostgres.js';
import { createLogger } from '../../../server/logger.js';
import { send, type Reply } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import { databaseProcesses } from '../../../harness/procfs.js';
import {
  NOTES_SERVICES,
  range,
  startServices,
  TEXT_FIELD,
  type NotesService,
} from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { isShapedOutage } from '../../support/trafficFlow.js';
import { expectChecks } from '../../support/checks.js';

const FREEZE_CYCLES = 3;
const ANSWER_WITHIN_MS = 5_000;

interface FrozenWrite {
  service: NotesService;
  title: string;
  key?: string;
  frozen?: Reply;
  frozenMs: number;
  retried?: Reply;
}

describe('6. Hostile load: writes while the database is frozen', () => {
  const dataDir = useTemporaryDataDir();

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
      const post = (write: FrozenWrite, text: string) =>
        send(services.urls[write.service], {
          method: 'POST',
          path: '/notes',
          json: { title: write.title, [TEXT_FIELD[write.service]]: text },
          headers: write.key ? { 'idempotency-key': write.key } : {},
          timeoutMs: 30_000,
        }).catch(() => undefined);
      const seeded = await Promise.all(
        NOTES_SERVICES.map(async (service) => {
          const reply = await post({ service, title: 'warm-up', frozenMs: 0 }, 'x');
          return (reply?.json as { id: number }).id;
        }),
      );

      const writes: FrozenWrite[] = [];
      for (let cycle = 1; cycle <= FREEZE_CYCLES; cycle++) {
        // Pooled connections ready, so that the writes go out on them and sit in the frozen
        // server's buffers.
        await Promise.all(
          NOTES_SERVICES.flatMap((service, index) =>
            range(4).map(() =>
              send(services.urls[service], { method: 'GET', path: `/notes/${seeded[index]}` }),
            ),
          ),
        );
        // The writes sent while every PostgreSQL process is stopped; the keyed ones sent again
        // after the thaw.
        const cycleWrites: FrozenWrite[] = NOTES_SERVICES.flatMap((service) => [
          { service, title: `keyed ${cycle}`, key: `freeze-${cycle}-${service}`, frozenMs: NaN },
          { service, title: `unkeyed ${cycle}`, frozenMs: NaN },
        ]);
        const text = `sent while frozen, cycle ${cycle}`;
        const frozen = await databaseProcesses(dataDir());
        try {
          frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
          await Promise.all(
            cycleWrites.map(async (write) => {
              const startedAt = performance.now();
              write.frozen = await post(write, text);
              write.frozenMs = performance.now() - startedAt;
            }),
          );
        } finally {
          frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
        }
        await sleep(2_000);
        for (const write of cycleWrites.filter(({ key }) => key))
          write.retried = await post(write, text);
        writes.push(...cycleWrites);
      }

      const stored = await withClient(database.url, async (client) => {
        const counts = [];
        for (const { service, title } of writes)
          counts.push(
            (
              await client.query(
                `SELECT count(*)::int AS n FROM ${service}.notes WHERE title = $1`,
                [title],
              )
            ).rows[0].n,
          );
        return counts;
      });
      const keyed = writes.flatMap((write, index) =>
        write.key ? [{ ...write, stored: stored[index] }] : [],
      );
      expectChecks({
        "every write during the freeze answered 500 in the service's shape": writes.every(
          ({ service, frozen }) =>
            isShapedOutage({
              service,
              status: frozen?.status,
              body: frozen?.json,
              startedAt: 0,
              endedAt: 0,
            }),
        ),
        'each within 5 s': writes.every((write) => write.frozenMs <= ANSWER_WITHIN_MS),
        'every keyed retry after the thaw answered 201': keyed.every(
          (write) => write.retried?.status === 201,
        ),
        'exactly one note per keyed title': keyed.every((write) => write.stored === 1),
        'the process kept running': services.child.exitCode === null,
      });
      expect(await services.stop()).toBe(0);
    },
    120_000,
  );
});
