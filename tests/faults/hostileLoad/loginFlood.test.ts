import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, onTestFinished, test } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { percentile, send, type Request } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import {
  NOTES_SERVICES,
  range,
  scratchDatabase,
  startServices,
  TEXT_FIELD,
} from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks } from '../../support/checks.js';

const FLOOD_MS = 3_000;
const LOGIN_CLIENTS = 16;
const READERS_PER_SERVICE = 4;
// Reads take tens of milliseconds here; the bound leaves room for a busy machine.
const READ_P99_LIMIT_MS = 1_000;

describe('6. Hostile load: a login flood beside note reads', () => {
  const dataDir = useTemporaryDataDir();

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
      const ids = await Promise.all(
        NOTES_SERVICES.map(async (service) => {
          const { rows } = await withClient(url, (client) =>
            client.query(
              `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]})
                VALUES ('read during logins', 'x') RETURNING id`,
            ),
          );
          return rows[0].id as number;
        }),
      );

      const floodEnds = performance.now() + FLOOD_MS;
      /** Sends `request` to `base` again and again until the flood ends: each answer's status. */
      const repeat = async (base: string, request: () => Request, answers: Answer[]) => {
        while (performance.now() < floodEnds) {
          const startedAt = performance.now();
          const reply = await send(base, request()).catch(() => undefined);
          answers.push({ status: reply?.status, ms: reply?.ms ?? performance.now() - startedAt });
        }
      };
      type Answer = { status?: number; ms: number };
      const logins: Answer[] = [];
      const reads: Answer[] = [];
      // Two clients per address, each address's share of the password checks.
      const loginAgents = range(LOGIN_CLIENTS / 2).map(
        () => new http.Agent({ keepAlive: true, maxSockets: 2 }),
      );
      const readAgents = NOTES_SERVICES.map(() => new http.Agent({ keepAlive: true }));
      onTestFinished(() => [...loginAgents, ...readAgents].forEach((agent) => agent.destroy()));
      const flood = range(LOGIN_CLIENTS).map((client) =>
        repeat(
          services.urls.auth,
          () => ({
            method: 'POST',
            path: '/api/login',
            json: { email: admin.email, password: admin.password },
            agent: loginAgents[client >> 1],
            localAddress: `127.0.6.${(client >> 1) + 1}`,
            timeoutMs: 30_000,
          }),
          logins,
        ),
      );
      // The readers come once the password checks are running, so that the pools' first
      // connections are opened during the flood.
      await sleep(300);
      await Promise.all([
        ...flood,
        ...NOTES_SERVICES.flatMap((service, index) =>
          range(READERS_PER_SERVICE).map(() =>
            repeat(
              services.urls[service],
              () => ({
                method: 'GET',
                path: `/notes/${ids[index]}`,
                agent: readAgents[index],
                timeoutMs: 15_000,
              }),
              reads,
            ),
          ),
        ),
      ]);

      expectChecks({
        'every note read answered 200': reads.length > 0 && reads.every((r) => r.status === 200),
        [`GET /notes/{id} p99 < ${READ_P99_LIMIT_MS} ms`]:
          percentile(
            reads.map((read) => read.ms),
            99,
          ) < READ_P99_LIMIT_MS,
        'every login answered 200': logins.every((login) => login.status === 200),
        'some logins succeeded (the password checks ran)': logins.some((l) => l.status === 200),
        'the process kept running': services.child.exitCode === null,
      });
      expect(await services.stop()).toBe(0);
    },
    120_000,
  );
});
