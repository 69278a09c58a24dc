import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../server/db/embeddedPostgres.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { send, type Request } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import {
  descendants,
  postgresProcessesFor,
  startProcess,
  type ProcessOptions,
  type RunningProcess,
  type ServiceUrls,
} from '../../harness/processes.js';
import { NOTES_SERVICES, TEXT_FIELD } from '../support/hostileLoad.js';
import { useTemporaryDataDir } from '../support/services.js';
import { expectChecks, passed, report } from './report.js';
import { scale } from './scale.js';

// The database goes away under the running process. The suite's shared PostgreSQL must not be
// stopped, so this file runs its own embedded server, started again on the port its first start
// drew: it comes back at the same address the services were given in DATABASE_URL.

const ANSWER_WITHIN_MS = 5_000;
const RECOVER_WITHIN_MS = 5_000;

interface Sample {
  service: 'notes8080' | 'notes8000' | 'health' | 'auth';
  startedAt: number;
  endedAt: number;
  status?: number;
  body?: unknown;
  error?: string;
}

/** Keeps a few clients busy against every service until `stop()`; each sample is one request. */
function trafficFlow(urls: ServiceUrls) {
  const samples: Sample[] = [];
  let running = true;
  const agent = new http.Agent({ keepAlive: true });

  async function request(service: Sample['service'], base: string, req: Request) {
    const startedAt = performance.now();
    try {
      const response = await send(base, { ...req, agent, timeoutMs: 15_000 });
      const sample = {
        service,
        startedAt,
        endedAt: performance.now(),
        status: response.status,
        body: response.json,
      };
      samples.push(sample);
      return sample;
    } catch (error) {
      samples.push({ service, startedAt, endedAt: performance.now(), error: String(error) });
      return undefined;
    }
  }

  async function notesWorker(service: 'notes8080' | 'notes8000', worker: number) {
    const base = urls[service];
    for (let i = 0; running; i++) {
      const fields =
        service === 'notes8080'
          ? { title: `w${worker}-${i}`, body: 'b' }
          : { title: `w${worker}-${i}`, content: 'c' };
      const created = await request(service, base, {
        method: 'POST',
        path: '/notes',
        json: fields,
      });
      const id = (created?.body as { id?: number } | undefined)?.id;
      if (created?.status === 201 && id)
        await request(service, base, { method: 'GET', path: `/notes/${id}` });
      await sleep(20);
    }
  }

  async function probe(service: 'health' | 'auth', base: string, path: string) {
    while (running) {
      await request(service, base, { method: 'GET', path });
      await sleep(50);
    }
  }

  const workers = [
    ...[0, 1, 2].map((worker) => notesWorker('notes8080', worker)),
    ...[0, 1, 2].map((worker) => notesWorker('notes8000', worker)),
    probe('health', urls.notes8000, '/health'),
    probe('auth', urls.auth, '/api/me'),
  ];
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(workers);
      agent.destroy();
    },
  };
}

/** The PostgreSQL server of `dataDir` and every process it started (its backends and workers). */
async function databaseProcesses(dataDir: string): Promise<number[]> {
  const servers = await postgresProcessesFor(dataDir);
  return [...servers, ...(await Promise.all(servers.map(descendants))).flat()];
}

interface ListRead {
  status?: number;
  bytes: number;
  /** The answer ended as HTTP says a whole one ends, and its body parsed. */
  complete: boolean;
  notes?: { title: string; [field: string]: unknown }[];
  endedAt: number;
}

/** GET /notes read at full speed; `atBytes` is called once that much of the body has arrived. */
function readList(
  base: string,
  atBytes = Infinity,
  at: () => void = () => undefined,
): Promise<ListRead> {
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
      resolve({
        status,
        bytes,
        complete: ended && notes !== undefined,
        notes,
        endedAt: performance.now(),
      });
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

/** A whole list holding the `count` long notes whole (the table may hold other notes too). */
const isWholeList = (read: ListRead, count: number, chars: number) =>
  read.status === 200 &&
  read.complete &&
  read.notes?.filter((note) =>
    Object.values(note).some((value) => typeof value === 'string' && value.length === chars),
  ).length === count;

const isSuccess = (sample: Sample) =>
  sample.status !== undefined && sample.status >= 200 && sample.status < 300;

/** A 500 in the service's own error shape: `{error: string}` (8080), `{detail: string}` (8000). */
function isShapedOutage(sample: Sample): boolean {
  if (sample.status !== 500 || typeof sample.body !== 'object' || sample.body === null)
    return false;
  const body = sample.body as Record<string, unknown>;
  const key = sample.service === 'notes8080' ? 'error' : 'detail';
  return Object.keys(body).length === 1 && typeof body[key] === 'string';
}

describe('database outage', () => {
  const dataDir = useTemporaryDataDir();
  /** Drawn by the first start; every later start keeps it, so the services' URL stays right. */
  let port: number | undefined;
  let database: RunningPostgres | undefined;
  const logger = createLogger('warn');

  /** Starts the process, and stops it when the test ends, whether it passed or not. */
  const startServices = async (options: ProcessOptions): Promise<RunningProcess> => {
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
    const url = database!.url;
    const services = await startServices({ dataDir: dataDir(), env: { DATABASE_URL: url } });

    const flow = trafficFlow(services.urls);
    await sleep(scale(1_000, 3_000));
    const stopBegin = performance.now();
    await stopDatabase();
    const stopped = performance.now();
    await sleep(scale(3_000, 10_000));
    const startBegin = performance.now();
    await startDatabase();
    const ready = performance.now();
    // Until both notes services have answered 2xx again (or well past the promise), then a while
    // more.
    const recoveredBoth = () =>
      (['notes8080', 'notes8000'] as const).every((service) =>
        flow.samples.some((s) => s.service === service && s.startedAt >= ready && isSuccess(s)),
      );
    while (!recoveredBoth() && performance.now() - ready < 2 * RECOVER_WITHIN_MS) await sleep(50);
    const recoveredAt = performance.now();
    await sleep(scale(1_500, 5_000));
    await flow.stop();

    const { samples } = flow;
    const notes = samples.filter((s) => s.service === 'notes8080' || s.service === 'notes8000');
    const before = notes.filter((s) => s.endedAt < stopBegin);
    const during = notes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
    const transition = notes.filter(
      (s) => !before.includes(s) && !during.includes(s) && s.startedAt < recoveredAt,
    );
    const after = notes.filter((s) => s.startedAt >= recoveredAt);
    const probes = samples.filter((s) => s.service === 'health' || s.service === 'auth');
    const probesDuring = probes.filter((s) => s.startedAt >= stopped && s.endedAt <= startBegin);
    const slowest = Math.max(...samples.map((s) => s.endedAt - s.startedAt));
    const networkErrors = samples.filter((s) => s.error);
    const recovery = (service: Sample['service']) => {
      const first = notes.find(
        (s) => s.service === service && s.startedAt >= ready && isSuccess(s),
      );
      return first ? first.endedAt - ready : Infinity;
    };
    const recovered = { notes8080: recovery('notes8080'), notes8000: recovery('notes8000') };
    const downBodies = [...new Set(during.map((s) => JSON.stringify(s.body)))];
    const healthy = (s: Sample) =>
      s.service === 'health'
        ? s.status === 200 && (s.body as { status?: string })?.status === 'healthy'
        : s.status === 401 && typeof (s.body as { error?: unknown })?.error === 'string';

    const checks = {
      'all answered before the outage': before.length > 0 && before.every(isSuccess),
      'every request during the outage answered 500 in shape':
        during.length >= 4 && during.every(isShapedOutage),
      'requests around the transitions answered 2xx or 500 in shape': transition.every(
        (s) => isSuccess(s) || isShapedOutage(s),
      ),
      'no answer took more than 5 s, no connection failed':
        slowest <= ANSWER_WITHIN_MS && networkErrors.length === 0,
      '/health (8000) and /api/me answered during the outage':
        probesDuring.length > 0 && probes.every(healthy),
      'each notes service served again within 5 s':
        Math.max(recovered.notes8080, recovered.notes8000) <= RECOVER_WITHIN_MS,
      'all answered 2xx once both had recovered': after.length > 0 && after.every(isSuccess),
      'the process kept running': services.child.exitCode === null,
    };
    report({
      key: '1a',
      case: '1. Database outage while requests flow',
      done:
        `6 clients creating and reading notes on 8080 and 8000, plus /health and ` +
        `/api/me probes, through the process (\`startProcess\`, DATABASE_URL to ` +
        `a PostgreSQL of the test's own); PostgreSQL stopped ` +
        `for ${((startBegin - stopped) / 1000).toFixed(1)} s, then started again at the same ` +
        `port.`,
      expected:
        "During the outage every notes request answers 500 in the service's " +
        'error shape within 5 s; /health still answers; no crash. Within 5 s of ' +
        'PostgreSQL being back, both services serve normally without a restart.',
      observed:
        `${samples.length} requests: ${before.length} before (all ` +
        `2xx: ${checks['all answered before the outage']}), ${during.length} during the ` +
        `outage (500 in shape: ${during.filter(isShapedOutage).length}; ` +
        `bodies ${downBodies.join(', ')}), ${transition.length} around the ` +
        `transitions, ${after.length} after recovery ` +
        `(2xx: ${after.filter(isSuccess).length}). Slowest answer ${Math.round(slowest)} ` +
        `ms; ${networkErrors.length} connection errors. ${probes.filter(healthy).length} ` +
        `of ${probes.length} probes (${probesDuring.length} during the outage) answered as ` +
        `usual. Back in service ${Math.round(recovered.notes8080)} ms (8080) ` +
        `and ${Math.round(recovered.notes8000)} ms (8000) after PostgreSQL was ready. ` +
        `Process still running: ${checks['the process kept running']}.`,
      pass: passed(checks),
    });
    if (!passed(checks)) {
      const bad = [
        ...during.filter((s) => !isShapedOutage(s)),
        ...transition.filter((s) => !isSuccess(s) && !isShapedOutage(s)),
        ...after.filter((s) => !isSuccess(s)),
        ...networkErrors,
      ];
      console.error('outage: unexpected answers', bad.slice(0, 10));
    }
    expectChecks(checks);

    expect(await services.stop()).toBe(0);
  }, 180_000);

  // Beyond a stop: a database that accepts nothing and answers nothing (a frozen host or a
  // network partition), where only the services' own timeouts can end a request.
  test(
    'requests while the database is frozen answer 500 ' +
      'within 5 s; the services recover by themselves',
    async () => {
      const services = await startServices({
        dataDir: dataDir(),
        env: { DATABASE_URL: database!.url },
      });
      const flow = trafficFlow(services.urls);
      await sleep(2_000);
      const frozen = await databaseProcesses(dataDir());
      const freezeMs = scale(6_000, 12_000);
      const freezeBegin = performance.now();
      try {
        frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
        await sleep(freezeMs);
      } finally {
        frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
      }
      const thawed = performance.now();
      await sleep(RECOVER_WITHIN_MS + 2_000);
      await flow.stop();

      const notes = flow.samples.filter(
        (s) => s.service === 'notes8080' || s.service === 'notes8000',
      );
      const during = notes.filter((s) => s.startedAt >= freezeBegin && s.startedAt < thawed);
      const slowest = Math.max(...during.map((s) => s.endedAt - s.startedAt));
      const after = notes.filter((s) => s.startedAt >= thawed + RECOVER_WITHIN_MS);
      const bodies = [
        ...new Set(during.filter((s) => !isSuccess(s)).map((s) => JSON.stringify(s.body))),
      ];
      const checks = {
        'every request during the freeze answered (2xx or 500 in shape)':
          during.length > 0 && during.every((s) => isSuccess(s) || isShapedOutage(s)),
        'none took more than 5 s': slowest <= ANSWER_WITHIN_MS,
        'the 500s say "database unavailable"': during.every(
          (s) => isSuccess(s) || Object.values(s.body as object)[0] === 'database unavailable',
        ),
        'all answered 2xx 5 s after the thaw': after.length > 0 && after.every(isSuccess),
        'the process kept running': services.child.exitCode === null,
      };
      report({
        key: '1b',
        case: '1. Database frozen (not answering)',
        done:
          `The same clients and probes; every PostgreSQL process SIGSTOPped ` +
          `for ${freezeMs / 1000} s (${frozen.length} processes), then SIGCONTinued. ` +
          `Default DB_TIMEOUT_MS (${loadConfig({}).database.timeoutMs} ms).`,
        expected:
          'Every notes request answers (500 in the service\'s shape, "database unavailable") ' +
          'within 5 s; the services serve normally again within 5 s of the thaw.',
        observed:
          `${during.length} notes requests started during the ` +
          `freeze: ${during.filter(isShapedOutage).length} answered 500 in ` +
          `shape, ${during.filter(isSuccess).length} 2xx; slowest ${Math.round(slowest)} ms; ` +
          `bodies ${bodies.join(', ')}. After the thaw (+5 ` +
          `s): ${after.filter(isSuccess).length}/${after.length} 2xx. Process still ` +
          `running: ${checks['the process kept running']}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    180_000,
  );

  // A long list goes out in batches, those after a large one as the bytes of a COPY: a batch of a
  // database that stops answering is ended by the client's query timeout, the COPY's included.
  test(
    'a long list whose database freezes in its middle is cut ' +
      'short within DB_TIMEOUT_MS, and the next one is whole',
    async () => {
      const services = await startServices({
        dataDir: dataDir(),
        env: { DATABASE_URL: database!.url, LOG_LEVEL: 'warn' },
      });
      const notes = 20;
      const noteChars = 2 ** 20;
      await withClient(database!.url, async (client) => {
        for (const service of NOTES_SERVICES) {
          for (let i = 0; i < notes; i++)
            await client.query(
              `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]})
                VALUES ($1, repeat('x', $2))`,
              [`long ${i}`, noteChars],
            );
        }
      });
      const timeoutMs = loadConfig({}).database.timeoutMs;
      const runs = [];
      for (const service of NOTES_SERVICES) {
        // A list first, so that the pool's connections (each a PostgreSQL process) are there to
        // freeze.
        await readList(services.urls[service]);
        const frozen = await databaseProcesses(dataDir());
        let frozenAt: number | undefined;
        let thawTimer: NodeJS.Timeout | undefined;
        let thawed = false;
        const thaw = () => {
          clearTimeout(thawTimer);
          if (!thawed) frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
          thawed = true;
        };
        let read: ListRead;
        try {
          read = await readList(services.urls[service], 2 * noteChars, () => {
            frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
            frozenAt = performance.now();
            // A list that waits for the thaw ends then, late: the check below says so.
            thawTimer = setTimeout(thaw, timeoutMs + 5_000);
          });
        } finally {
          thaw();
        }
        const thawedAt = performance.now();
        let next: ListRead;
        do next = await readList(services.urls[service]);
        while (
          !isWholeList(next, notes, noteChars) &&
          performance.now() - thawedAt < RECOVER_WITHIN_MS
        );
        runs.push({
          service,
          read,
          cutAfterMs: frozenAt === undefined ? undefined : read.endedAt - frozenAt,
          next,
          nextAfterMs: next.endedAt - thawedAt,
        });
      }
      const cutLines = logLines(services.output()).filter(
        (line) => line.msg === 'answer cut short',
      );

      const checks: Record<string, boolean> = {};
      for (const run of runs) {
        checks[`${run.service}: the list began 200 and the database froze in its middle`] =
          run.read.status === 200 && run.cutAfterMs !== undefined;
        checks[`${run.service}: the list was cut short (not ended as if whole)`] =
          !run.read.complete && run.read.bytes < notes * noteChars;
        checks[`${run.service}: the cut came within DB_TIMEOUT_MS + 2 s of the freeze`] =
          run.cutAfterMs !== undefined && run.cutAfterMs <= timeoutMs + 2_000;
        checks[`${run.service}: a list after the thaw was whole within 5 s`] =
          isWholeList(run.next, notes, noteChars) && run.nextAfterMs <= RECOVER_WITHIN_MS;
      }
      checks['each cut was logged at error level'] =
        cutLines.length === runs.length && cutLines.every((line) => line.level === 50);
      checks['the process kept running'] = services.child.exitCode === null;
      report({
        key: '1e',
        case: '1. Database frozen in the middle of a long list',
        done:
          `${notes} notes of ${noteChars / 2 ** 20} MiB in each notes service; GET /notes ` +
          `read at full speed, and every PostgreSQL process SIGSTOPped ` +
          `once ${(2 * noteChars) / 2 ** 20} MiB of it had arrived, SIGCONTinued when the ` +
          `answer ended (or ${(timeoutMs + 5_000) / 1000} s after the freeze, whichever came ` +
          `first); then GET /notes again until whole. Default DB_TIMEOUT_MS (${timeoutMs} ms).`,
        expected:
          'The list is cut short (its connection closed before the array ends, ' +
          'so that no client takes it for whole) within DB_TIMEOUT_MS + 2 s of ' +
          'the freeze, and logged; after the thaw a list is whole within 5 s.',
        observed:
          runs
            .map(
              (run) =>
                `${run.service}: status ${run.read.status}, ` +
                `${(run.read.bytes / 2 ** 20).toFixed(1)} MiB received, ` +
                (run.read.complete ? 'ended as whole' : 'cut short') +
                ' ' +
                (run.cutAfterMs === undefined
                  ? '(no freeze)'
                  : `${Math.round(run.cutAfterMs)} ms after the freeze`) +
                '; after the thaw ' +
                (isWholeList(run.next, notes, noteChars)
                  ? `a whole list in ${Math.round(run.nextAfterMs)} ms`
                  : `no whole list (${run.next.status}, ${run.next.bytes} bytes)`) +
                '.',
            )
            .join(' ') +
          ` "answer cut short" lines: ${cutLines.length} (` +
          [
            ...new Set(
              cutLines.map((line) =>
                String((line.err as { message?: string } | undefined)?.message),
              ),
            ),
          ].join(', ') +
          `). ` +
          `Process still running: ${checks['the process kept running']}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    120_000,
  );

  test('start-up with the database down retries with backoff, says why, then serves', async () => {
    const url = database!.url;
    await stopDatabase();
    const starting = startServices({
      dataDir: dataDir(),
      env: { DATABASE_URL: url, DB_STARTUP_RETRY_MS: '60000', LOG_LEVEL: 'info' },
    });
    starting.catch(() => undefined);
    const downFor = scale(3_000, 8_000);
    await sleep(downFor);
    await startDatabase();
    const ready = performance.now();
    const services = await starting;
    const listeningAfter = performance.now() - ready;

    const retries = logLines(services.output()).filter(
      (line) => line.msg === 'database not reachable yet',
    );
    const delays = retries.map((line) => Number(line.retryInMs));
    const reasons = [...new Set(retries.map((line) => String(line.err)))];
    const created = await send(services.urls.notes8080, {
      method: 'POST',
      path: '/notes',
      json: { title: 'after the retry', body: '' },
    });
    const listed = await send(services.urls.notes8000, { method: 'GET', path: '/notes' });

    const checks = {
      'logged several refusals': retries.length >= 2,
      'the delay grew': Math.max(...delays) > Math.min(...delays),
      'each line says why':
        reasons.length > 0 &&
        reasons.every((reason) => /ECONNREFUSED|connect|starting up/i.test(reason)),
      'served once the database appeared': created.status === 201 && listed.status === 200,
    };
    report({
      key: '1c',
      case: '1. Start-up while the database is down',
      done:
        `Process started with DATABASE_URL pointing at a stopped PostgreSQL ` +
        `(DB_STARTUP_RETRY_MS=60000); PostgreSQL started ${downFor / 1000} s later.`,
      expected:
        'The process retries with growing delays, logging why, ' +
        'instead of exiting; it serves once the database is up.',
      observed:
        `${retries.length} "database not reachable yet" lines (both pools), ` +
        `delays ${[...new Set(delays)].join(', ')} ms, reason(s): ${reasons.join('; ')}. ` +
        `Listening ${Math.round(listeningAfter)} ms after PostgreSQL was ` +
        `ready; then create answered ${created.status}, list ${listed.status}.`,
      pass: passed(checks),
    });
    expectChecks(checks);

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
      () => undefined,
      (error: Error) => error.message,
    );
    const elapsed = performance.now() - started;
    const lines = logLines(failure ?? '');
    const reason =
      /^Cannot reach the database .* within 2000 ms \(DB_STARTUP_RETRY_MS\): .*$/m.exec(
        failure ?? '',
      )?.[0];

    const checks = {
      'did not start': failure !== undefined,
      'logged the refusals': lines.some((line) => line.msg === 'database not reachable yet'),
      'said in one line why it gave up, without a stack':
        reason !== undefined && !/\n\s+at /.test(failure ?? ''),
      'gave up within the bound (plus start-up time)': elapsed < 20_000,
    };
    report({
      key: '1d',
      case: '1. Start-up retry is bounded',
      done: 'Process started with PostgreSQL down and DB_STARTUP_RETRY_MS=2000.',
      expected:
        'It logs each refusal, then gives up with one line saying ' +
        'why and exits (non-zero), rather than waiting forever.',
      observed:
        `Exited after ${Math.round(elapsed)} ms (including process start-up); ` +
        `refusal ` +
        `lines: ${lines.filter((line) => line.msg === 'database not reachable yet').length}; ` +
        `last line: ${reason ?? '(none)'}.`,
      pass: passed(checks),
    });
    expectChecks(checks);
  }, 120_000);
});

describe('the embedded database crashes', () => {
  const dataDir = useTemporaryDataDir();

  test('a SIGKILLed postmaster restarts within 5 s; no acknowledged write is lost', async () => {
    const services = await startProcess({ dataDir: dataDir(), env: { DATABASE_URL: '' } });
    onTestFinished(async () => void (await services.stop()));
    const flow = trafficFlow(services.urls);
    await sleep(scale(1_000, 3_000));
    const postmaster = (await postgresProcessesFor(dataDir()))[0]!;
    const killedAt = performance.now();
    process.kill(postmaster, 'SIGKILL');
    const recoveredBoth = () =>
      (['notes8080', 'notes8000'] as const).every((service) =>
        flow.samples.some((s) => s.service === service && s.startedAt >= killedAt && isSuccess(s)),
      );
    while (!recoveredBoth() && performance.now() - killedAt < 3 * RECOVER_WITHIN_MS)
      await sleep(50);
    await sleep(scale(1_000, 3_000));
    await flow.stop();

    const notes = flow.samples.filter(
      (s) => s.service === 'notes8080' || s.service === 'notes8000',
    );
    const recovery = (service: Sample['service']) => {
      const first = notes.find(
        (s) => s.service === service && s.startedAt >= killedAt && isSuccess(s),
      );
      return first ? first.endedAt - killedAt : Infinity;
    };
    const recovered = { notes8080: recovery('notes8080'), notes8000: recovery('notes8000') };
    const afterCrash = notes.filter((s) => s.startedAt >= killedAt);
    const slowest = Math.max(...afterCrash.map((s) => s.endedAt - s.startedAt));
    // Every note a client was told was created (201) must be readable now.
    const acknowledged = notes
      .filter((s) => s.status === 201)
      .map((s) => ({
        service: s.service as 'notes8080' | 'notes8000',
        id: (s.body as { id: number }).id,
      }));
    const lost: string[] = [];
    for (const { service, id } of acknowledged) {
      const read = await send(services.urls[service], { method: 'GET', path: `/notes/${id}` });
      if (read.status !== 200) lost.push(`${service} ${id}: ${read.status}`);
    }
    const restartLogged = logLines(services.output()).some(
      (line) => line.msg === 'embedded PostgreSQL exited unexpectedly; starting it again',
    );

    const checks = {
      'each notes service served again within 5 s of the crash':
        Math.max(recovered.notes8080, recovered.notes8000) <= RECOVER_WITHIN_MS,
      'meanwhile every request answered 2xx or 500 in shape, within 5 s':
        afterCrash.every((s) => isSuccess(s) || isShapedOutage(s)) && slowest <= ANSWER_WITHIN_MS,
      'every acknowledged note is still there': acknowledged.length > 0 && lost.length === 0,
      'the crash and the restart were logged': restartLogged,
      'the process kept running': services.child.exitCode === null,
    };
    report({
      key: '1e',
      case: '1. The embedded database crashes',
      done:
        `The process on its embedded PostgreSQL (no DATABASE_URL), with ` +
        `the same clients and probes; the postmaster SIGKILLed under load.`,
      expected:
        'The process starts PostgreSQL again (same folder and port, ' +
        'crash recovery) within 5 s; requests meanwhile answer 500 in ' +
        'shape quickly; every note acknowledged with 201 is still there.',
      observed:
        `Back in service ${Math.round(recovered.notes8080)} ms (8080) ` +
        `and ${Math.round(recovered.notes8000)} ms (8000) after the ` +
        `kill; ${afterCrash.length} notes requests after ` +
        `it, ${afterCrash.filter(isShapedOutage).length} answered 500 in shape, ` +
        `slowest ${Math.round(slowest)} ms; ${acknowledged.length} acknowledged notes read ` +
        `back, ${lost.length} ` +
        `missing${lost.length ? ` (${lost.slice(0, 5).join(', ')})` : ''}; restart ` +
        `logged: ${restartLogged}.`,
      pass: passed(checks),
    });
    expectChecks(checks);
    expect(await services.stop()).toBe(0);
  }, 120_000);
});
