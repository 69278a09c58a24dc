import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../server/db/embeddedPostgres.js';
import { createLogger } from '../../server/logger.js';
import { send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { startProcess, type ProcessOptions } from '../../harness/processes.js';
import { databaseProcesses } from '../../harness/procfs.js';
import { useTemporaryDataDir } from '../support/services.js';
import {
  ANSWER_WITHIN_MS,
  isShapedOutage,
  isSuccess,
  RECOVER_WITHIN_MS,
  trafficFlow,
} from '../support/trafficFlow.js';
import { expectChecks } from '../support/checks.js';

// The database goes away under the running process. The suite's shared PostgreSQL must not be
// stopped, so this file runs its own embedded server, started again on the port its first start
// drew: it comes back at the same address the services were given in DATABASE_URL.

describe('database outage', () => {
  const dataDir = useTemporaryDataDir();
  let port: number | undefined;
  let database: RunningPostgres | undefined;
  const logger = createLogger('warn');

  const startServices = async (options: ProcessOptions) => {
    const services = await startProcess(options);
    onTestFinished(async () => void (await services.stop()));
    return services;
  };
  const startDatabase = async () => {
    database = await startEmbeddedPostgres({ dataDir: dataDir(), logger, durable: false, port });
    port = Number(new URL(database.url).port);
    return database;
  };
  const stopDatabase = async () => {
    await database?.stop();
    database = undefined;
  };
  beforeAll(startDatabase);
  // Before the data folder's own clean-up (after-hooks run last registered first).
  afterAll(stopDatabase);

  test('requests during an outage answer 500 quickly; the services recover alone', async () => {
    const services = await startServices({
      dataDir: dataDir(),
      env: { DATABASE_URL: database!.url },
    });
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
    await flow.stop();

    const notes = flow.notes();
    const before = notes.filter((s) => s.endedAt < stopBegin);
    const during = notes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
    const transition = notes.filter(
      (s) => !before.includes(s) && !during.includes(s) && s.startedAt < recoveredAt,
    );
    const after = notes.filter((s) => s.startedAt >= recoveredAt);
    const probes = flow.samples.filter((s) => s.service === 'health' || s.service === 'auth');
    const probesDuring = probes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
    const healthy = (s: (typeof probes)[number]) =>
      s.service === 'health'
        ? s.status === 200 && (s.body as { status?: string })?.status === 'healthy'
        : s.status === 401 && typeof (s.body as { error?: unknown })?.error === 'string';

    expectChecks({
      'all answered before the outage': before.length > 0 && before.every(isSuccess),
      'every request during the outage answered 500 in shape':
        during.length >= 4 && during.every(isShapedOutage),
      'requests around the transitions answered 2xx or 500 in shape': transition.every(
        (s) => isSuccess(s) || isShapedOutage(s),
      ),
      'no answer took more than 5 s, no connection failed': flow.samples.every(
        (s) => s.endedAt - s.startedAt <= ANSWER_WITHIN_MS && !s.error,
      ),
      '/health (8000) and /api/me answered during the outage':
        probesDuring.length > 0 && probes.every(healthy),
      'each notes service served again within 5 s': recovered() <= RECOVER_WITHIN_MS,
      'all answered 2xx once both had recovered': after.length > 0 && after.every(isSuccess),
      'the process kept running': services.child.exitCode === null,
    });
    expect(await services.stop()).toBe(0);
  }, 180_000);

  // Beyond a stop: a database that accepts nothing and answers nothing (a frozen host or a
  // network partition), where only the services' own timeouts can end a request.
  test('requests while the database is frozen answer 500 within 5 s; they recover', async () => {
    const services = await startServices({
      dataDir: dataDir(),
      env: { DATABASE_URL: database!.url },
    });
    const flow = trafficFlow(services.urls);
    await sleep(2_000);
    const frozen = await databaseProcesses(dataDir());
    const freezeBegin = performance.now();
    try {
      frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
      await sleep(6_000);
    } finally {
      frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
    }
    const thawed = performance.now();
    await sleep(RECOVER_WITHIN_MS + 2_000);
    await flow.stop();

    const notes = flow.notes();
    const during = notes.filter((s) => s.startedAt >= freezeBegin && s.startedAt < thawed);
    const after = notes.filter((s) => s.startedAt >= thawed + RECOVER_WITHIN_MS);
    expectChecks({
      'every request during the freeze answered (2xx or 500 in shape)':
        during.length > 0 && during.every((s) => isSuccess(s) || isShapedOutage(s)),
      'none took more than 5 s': during.every((s) => s.endedAt - s.startedAt <= ANSWER_WITHIN_MS),
      'the 500s say "database unavailable"': during.every(
        (s) => isSuccess(s) || Object.values(s.body as object)[0] === 'database unavailable',
      ),
      'all answered 2xx 5 s after the thaw': after.length > 0 && after.every(isSuccess),
      'the process kept running': services.child.exitCode === null,
    });
    expect(await services.stop()).toBe(0);
  }, 180_000);

  test('start-up with the database down retries with backoff, says why, then serves', async () => {
    const url = database!.url;
    await stopDatabase();
    const starting = startServices({
      dataDir: dataDir(),
      env: { DATABASE_URL: url, DB_STARTUP_RETRY_MS: '60000', LOG_LEVEL: 'info' },
    });
    starting.catch(() => undefined);
    await sleep(3_000);
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
    const failure = await startServices({
      dataDir: dataDir(),
      env: { DATABASE_URL: url, DB_STARTUP_RETRY_MS: '2000', LOG_LEVEL: 'info' },
    }).then(
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
