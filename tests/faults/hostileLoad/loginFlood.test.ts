import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, onTestFinished, test } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { percentile, send } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import {
  NOTES_SERVICES,
  range,
  scratchDatabase,
  startServices,
  TEXT_FIELD,
  type NotesService,
} from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks } from '../../support/checks.js';

describe('6. Hostile load: a login flood beside note reads', () => {
  const dataDir = useTemporaryDataDir();

  const FLOOD_MS = 5_000;
  const LOGIN_CLIENTS = 16;
  const READERS_PER_SERVICE = 4;
  // Reads take tens of milliseconds here; the bound leaves room for a busy machine.
  const READ_P99_LIMIT_MS = 1_000;

  test(
    `${LOGIN_CLIENTS} clients logging in for ${FLOOD_MS / 1000} s ` +
      `at the default hash cost: note reads on both services stay fast`,
    async () => {
      const url = await scratchDatabase();
      // Empty counts as unset: the default cost, whatever the environment of the test run says.
      const env = { DATABASE_URL: url, PASSWORD_HASH_COST: '' };
      const config = loadConfig({ ...process.env, ...env });
      const admin = config.auth.accounts.find((account) => account.role === 'admin')!;
      const services = await startServices(dataDir(), env);
      // One note each, through SQL: the notes services' pools have not opened a connection yet.
      const ids = Object.fromEntries(
        await Promise.all(
          NOTES_SERVICES.map(async (service) => {
            const { rows } = await withClient(url, (client) =>
              client.query<{ id: number }>(
                `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]})
                  VALUES ('read during logins', 'x') RETURNING id`,
              ),
            );
            return [service, rows[0]!.id] as const;
          }),
        ),
      ) as Record<NotesService, number>;

      const logins: { status?: number; ms: number; error?: string }[] = [];
      const reads: {
        service: NotesService;
        status?: number;
        ms: number;
        error?: string;
      }[] = [];
      // Two clients per address, each address's share of the password checks.
      const loginAgents = range(LOGIN_CLIENTS / 2).map(
        () => new http.Agent({ keepAlive: true, maxSockets: 2 }),
      );
      const readAgents = {
        notes8080: new http.Agent({ keepAlive: true }),
        notes8000: new http.Agent({ keepAlive: true }),
      };
      onTestFinished(() =>
        [...loginAgents, ...Object.values(readAgents)].forEach((agent) => agent.destroy()),
      );

      const floodEnds = performance.now() + FLOOD_MS;
      const loginClient = async (client: number) => {
        const address = client >> 1;
        while (performance.now() < floodEnds) {
          const startedAt = performance.now();
          try {
            const reply = await send(services.urls.auth, {
              method: 'POST',
              path: '/api/login',
              json: { email: admin.email, password: admin.password },
              agent: loginAgents[address],
              localAddress: `127.0.6.${address + 1}`,
              timeoutMs: 30_000,
            });
            logins.push({ status: reply.status, ms: reply.ms });
          } catch (error) {
            logins.push({ ms: performance.now() - startedAt, error: String(error) });
          }
        }
      };
      const reader = async (service: NotesService) => {
        while (performance.now() < floodEnds) {
          const startedAt = performance.now();
          try {
            const reply = await send(services.urls[service], {
              method: 'GET',
              path: `/notes/${ids[service]}`,
              agent: readAgents[service],
              timeoutMs: 15_000,
            });
            reads.push({ service, status: reply.status, ms: reply.ms });
          } catch (error) {
            reads.push({ service, ms: performance.now() - startedAt, error: String(error) });
          }
        }
      };
      const flood = range(LOGIN_CLIENTS).map(loginClient);
      // The readers come once the password checks are running, so that the pools' first connections
      // are opened during the flood.
      await sleep(300);
      await Promise.all([
        ...flood,
        ...NOTES_SERVICES.flatMap((service) =>
          range(READERS_PER_SERVICE).map(() => reader(service)),
        ),
      ]);

      const succeeded = logins.filter((login) => login.status === 200);
      const failedReads = reads.filter((read) => read.status !== 200);
      const latencies = reads.map((read) => read.ms);
      const p99 = percentile(latencies, 99);
      const checks = {
        'every note read answered 200': reads.length > 0 && failedReads.length === 0,
        [`GET /notes/{id} p99 < ${READ_P99_LIMIT_MS} ms`]: p99 < READ_P99_LIMIT_MS,
        'every login answered 200': logins.every((login) => login.status === 200),
        'some logins succeeded (the password checks ran)': succeeded.length > 0,
        'the process kept running': services.child.exitCode === null,
      };
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    120_000,
  );
});
