import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../server/db/embeddedPostgres.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import { startProcess, type ProcessOptions } from '../../harness/processes.js';
import { databaseProcesses } from '../../harness/procfs.js';
import { NOTES_SERVICES, TEXT_FIELD } from '../support/hostileLoad.js';
import { useTemporaryDataDir } from '../support/services.js';
import {
  ANSWER_WITHIN_MS,
  isShapedOutage,
  isSuccess,
  RECOVER_WITHIN_MS,
  trafficFlow,
} from '../support/trafficFlow.js';
import { expectChecks, type Checks } from '../support/checks.js';

// The database goes away under the running process: stopped, frozen (a host that accepts nothing
// and answers nothing, or a network partition, where only the services' own timeouts can end a
// request), frozen in the middle of a long list. The suite's shared PostgreSQL must not be
// stopped, so this file runs its own embedded server, started again on the port its first start
// drew: it comes back at the same address the services were given in DATABASE_URL.

interface ListRead {
  status?: number;
  bytes: number;
  /** The answer ended as HTTP says a whole one ends, and its body parsed. */
  notes?: Record<string, unknown>[];
  endedAt: number;
}

/** GET /notes read at full speed; `at` is called once `atBytes` of the body have arrived. */
function readList(base: string, atBytes = Infinity, at = () => {}): Promise<ListRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let status: number | undefined;
    let ended = false;
    const done = () => {
      let notes: ListRead['notes'];
      try {
        notes = ended ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      } catch {
        notes = undefined;
      }
      resolve({ status, bytes, notes, endedAt: performance.now() });
    };
    const request = http.get(`${base}/notes`, (response) => {
      status = response.statusCode;
      response.on('data', (chunk: Buffer) => {
        if (bytes < atBytes && bytes + chunk.length >= atBytes) at();
        bytes += chunk.length;
        chunks.push(chunk);
      });
      response.on('end', () => (ended = true));
      response.on('error', () => undefined);
      response.on('close', done);
    });
    request.on('error', done);
  });
}

describe('database outage', () => {
  const dataDir = useTemporaryDataDir();
  let port: number | undefined;
  let database: RunningPostgres | undefined;
  const logger = createLogger('warn');

  const startServices = async (options: Omit<ProcessOptions, 'dataDir'>) => {
    const services = await startProcess({ dataDir: dataDir(), ...options });
    onTestFinished(async () => void (await services.stop()));
    return services;
  };
  const startDatabase = async () => {
    database = await startEmbeddedPostgres({ dataDir: dataDir(), logger, durable: false, port });
    port = Number(new URL(database.url).port);
  };
  const stopDatabase = async () => {
    await database?.stop();
    database = undefined;
  };
  /** The folder's PostgreSQL processes, to stop (SIGSTOP) and then to let go on, once. */
  const databaseFreezer = async () => {
    const pids = await databaseProcesses(dataDir());
    let thawed = false;
    return {
      freeze: () => pids.forEach((pid) => process.kill(pid, 'SIGSTOP')),
      thaw: () => {
        if (!thawed) pids.forEach((pid) => process.kill(pid, 'SIGCONT'));
        thawed = true;
      },
    };
  };
  beforeAll(startDatabase);
  // Before the data folder's own clean-up (after-hooks run last registered first).
  afterAll(stopDatabase);

  test(
    'stopped, then frozen, under traffic: requests answer 500 within 5 s, the services recover ' +
      'alone; a long list frozen midway is cut short and the next one is whole',
    async () => {
      const services = await startServices({ env: { DATABASE_URL: database!.url } });
      const flow = trafficFlow(services.urls);
      await sleep(1_000);
      const stopBegin = performance.now();
      await stopDatabase();
      const stopped = performance.now();
      await sleep(3_000);
      const startBegin = performance.now();
      await startDatabase();
      const ready = performance.now();
      const recovered = () =>
        Math.max(flow.recovery('notes8080', ready), flow.recovery('notes8000', ready));
      while (recovered() === Infinity && performance.now() - ready < 2 * RECOVER_WITHIN_MS)
        await sleep(50);
      const recoveredAt = performance.now();
      await sleep(1_500);

      // Frozen past the answer bound: only the services' timeouts end the requests.
      const db = await databaseFreezer();
      const freezeBegin = performance.now();
      db.freeze();
      await sleep(6_000).finally(db.thaw);
      const thawed = performance.now();
      await sleep(RECOVER_WITHIN_MS + 2_000);
      await flow.stop();

      // What answered before the freeze: the stop's findings.
      const before = (s: { endedAt: number }) => s.endedAt < freezeBegin;
      const notes = flow.notes();
      const ahead = notes.filter((s) => s.endedAt < stopBegin);
      const down = notes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
      const transition = notes.filter(
        (s) => !ahead.includes(s) && !down.includes(s) && s.startedAt < recoveredAt,
      );
      const back = notes.filter((s) => s.startedAt >= recoveredAt && before(s));
      const probes = flow.samples.filter(
        (s) => (s.service === 'health' || s.service === 'auth') && before(s),
      );
      const probesDown = probes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
      const healthy = (s: (typeof probes)[number]) =>
        s.service === 'health'
          ? s.status === 200 && (s.body as { status?: string })?.status === 'healthy'
          : s.status === 401 && typeof (s.body as { error?: unknown })?.error === 'string';
      const frozen = notes.filter((s) => s.startedAt >= freezeBegin && s.startedAt < thawed);
      const thawedLong = notes.filter((s) => s.startedAt >= thawed + RECOVER_WITHIN_MS);
      const checks: Checks = {
        'all answered before the outage': ahead.length > 0 && ahead.every(isSuccess),
        'every request during the outage answered 500 in shape':
          down.length >= 4 && down.every(isShapedOutage),
        'requests around the transitions answered 2xx or 500 in shape': transition.every(
          (s) => isSuccess(s) || isShapedOutage(s),
        ),
        'no answer took more than 5 s, no connection failed (until the freeze)': flow.samples
          .filter(before)
          .every((s) => s.endedAt - s.startedAt <= ANSWER_WITHIN_MS && !s.error),
        '/health (8000) and /api/me answered during the outage':
          probesDown.length > 0 && probes.every(healthy),
        'each notes service served again within 5 s': recovered() <= RECOVER_WITHIN_MS,
        'all answered 2xx once both had recovered': back.length > 0 && back.every(isSuccess),
        'every request during the freeze answered (2xx or 500 in shape)':
          frozen.length > 0 && frozen.every((s) => isSuccess(s) || isShapedOutage(s)),
        'none took more than 5 s': frozen.every((s) => s.endedAt - s.startedAt <= ANSWER_WITHIN_MS),
        'the 500s say "database unavailable"': frozen.every(
          (s) => isSuccess(s) || Object.values(s.body as object)[0] === 'database unavailable',
        ),
        'all answered 2xx 5 s after the thaw': thawedLong.length > 0 && thawedLong.every(isSuccess),
      };

      // A long list goes out a batch at a time: a batch of a database that stops answering is
      // ended by the pool's query timeout, and the answer cut short so that no client takes it
      // for whole.
      const count = 20;
      const chars = 2 ** 20;
      await withClient(database!.url, async (client) => {
        for (const service of NOTES_SERVICES)
          await client.query(
            `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]})
              SELECT 'long ' || i, repeat('x', $1) FROM generate_series(1, $2) AS i`,
            [chars, count],
          );
      });
      const isWhole = (read: ListRead) =>
        read.status === 200 &&
        read.notes?.filter((note) => Object.values(note).some((v) => String(v).length === chars))
          .length === count;
      const timeoutMs = loadConfig({}).database.timeoutMs;
      for (const service of NOTES_SERVICES) {
        // A list first, so that the pool's connections (PostgreSQL processes) are there to freeze.
        await readList(services.urls[service]);
        const db = await databaseFreezer();
        let frozenAt: number | undefined;
        // A list that waits for the thaw ends then, late: the check below says so.
        let thawTimer: NodeJS.Timeout | undefined;
        const read = await readList(services.urls[service], 2 * chars, () => {
          db.freeze();
          frozenAt = performance.now();
          thawTimer = setTimeout(db.thaw, timeoutMs + 5_000);
        }).finally(() => {
          clearTimeout(thawTimer);
          db.thaw();
        });
        const listThawedAt = performance.now();
        let next: ListRead;
        do next = await readList(services.urls[service]);
        while (!isWhole(next) && performance.now() - listThawedAt < RECOVER_WITHIN_MS);
        Object.assign(checks, {
          [`${service}: the list began 200 and the database froze in its middle`]:
            read.status === 200 && frozenAt !== undefined,
          [`${service}: the list was cut short (not ended as if whole)`]:
            read.notes === undefined && read.bytes < count * chars,
          [`${service}: the cut came within DB_TIMEOUT_MS + 2 s of the freeze`]:
            frozenAt !== undefined && read.endedAt - frozenAt <= timeoutMs + 2_000,
          [`${service}: a list after the thaw was whole within 5 s`]:
            isWhole(next) && next.endedAt - listThawedAt <= RECOVER_WITHIN_MS,
        });
      }
      const cutLines = logLines(services.output()).filter(
        (line) => line.msg === 'answer cut short',
      );
      checks['each cut was logged at error level'] =
        cutLines.length === NOTES_SERVICES.length && cutLines.every((line) => line.level === 50);
      checks['the process kept running'] = services.child.exitCode === null;
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    240_000,
  );

  test('start-up with the database down retries with backoff, says why, then serves', async () => {
    const url = database!.url;
    await stopDatabase();
    const env = { DATABASE_URL: url, DB_STARTUP_RETRY_MS: '60000', LOG_LEVEL: 'info' };
    const starting = startServices({ env });
    starting.catch(() => undefined);
    // Long enough for a start slowed by a busy machine to meet the refusal twice.
    await sleep(6_000);
    await startDatabase();
    const services = await starting;
    const retries = logLines(services.output()).filter(
      (line) => line.msg === 'database not reachable yet',
    );
    const delays = retries.map((line) => Number(line.retryInMs));
    const created = await send(services.urls.notes8080, {
      method: 'POST',
      path: '/notes',
      json: { title: 'after the retry', body: '' },
    });
    const listed = await send(services.urls.notes8000, { method: 'GET', path: '/notes' });
    expectChecks({
      'logged several refusals': retries.length >= 2,
      'the delay grew': Math.max(...delays) > Math.min(...delays),
      'each line says why': retries.every((line) =>
        /ECONNREFUSED|connect|starting up/i.test(String(line.err)),
      ),
      'served once the database appeared': created.status === 201 && listed.status === 200,
    });
    expect(await services.stop()).toBe(0);
  }, 180_000);

  test('start-up gives up after DB_STARTUP_RETRY_MS and exits, saying why', async () => {
    const url = database!.url;
    await stopDatabase();
    const started = performance.now();
    const env = { DATABASE_URL: url, DB_STARTUP_RETRY_MS: '2000', LOG_LEVEL: 'info' };
    const failure = await startServices({ env }).then(
      () => '',
      (error: Error) => error.message,
    );
    expectChecks({
      'logged the refusals': logLines(failure).some(
        (line) => line.msg === 'database not reachable yet',
      ),
      'said in one line why it gave up, without a stack':
        /^Cannot reach the database .* within 2000 ms \(DB_STARTUP_RETRY_MS\): .*$/m.test(
          failure,
        ) && !/\n\s+at /.test(failure),
      'gave up within the bound (plus start-up time)': performance.now() - started < 20_000,
    });
  }, 120_000);
});
