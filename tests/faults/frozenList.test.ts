import http from 'node:http';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../server/db/embeddedPostgres.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { logLines } from '../../harness/logs.js';
import { withClient } from '../../harness/postgres.js';
import { startProcess } from '../../harness/processes.js';
import { databaseProcesses } from '../../harness/procfs.js';
import { NOTES_SERVICES, TEXT_FIELD } from '../support/hostileLoad.js';
import { useTemporaryDataDir } from '../support/services.js';
import { RECOVER_WITHIN_MS } from '../support/trafficFlow.js';
import { expectChecks } from '../support/checks.js';

interface ListRead {
  status?: number;
  bytes: number;
  /** The answer ended as HTTP says a whole one ends, and its body parsed. */
  complete: boolean;
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
      resolve({ status, bytes, complete: notes !== undefined, notes, endedAt: performance.now() });
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

// A long list goes out a batch at a time: a batch of a database that stops answering is ended by
// the pool's query timeout, and the answer cut short so that no client takes it for whole.
describe('the database freezes in the middle of a long list', () => {
  const dataDir = useTemporaryDataDir();
  let database: RunningPostgres;
  beforeAll(async () => {
    database = await startEmbeddedPostgres({
      dataDir: dataDir(),
      logger: createLogger('warn'),
      durable: false,
    });
  });
  afterAll(() => database?.stop());

  test('the list is cut short within DB_TIMEOUT_MS, and the next one is whole', async () => {
    const services = await startProcess({
      dataDir: dataDir(),
      env: { DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
    });
    onTestFinished(async () => void (await services.stop()));
    const count = 20;
    const chars = 2 ** 20;
    await withClient(database.url, async (client) => {
      for (const service of NOTES_SERVICES)
        for (let i = 0; i < count; i++)
          await client.query(
            `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]})
              VALUES ($1, repeat('x', $2))`,
            [`long ${i}`, chars],
          );
    });
    const isWhole = (read: ListRead) =>
      read.status === 200 &&
      read.notes?.filter((note) => Object.values(note).some((v) => (v as string).length === chars))
        .length === count;
    const timeoutMs = loadConfig({}).database.timeoutMs;
    const checks: Record<string, boolean> = {};
    for (const service of NOTES_SERVICES) {
      // A list first, so that the pool's connections (each a PostgreSQL process) are there to
      // freeze.
      await readList(services.urls[service]);
      const frozen = await databaseProcesses(dataDir());
      let frozenAt: number | undefined;
      let thawed = false;
      const thaw = () => {
        if (!thawed) frozen.forEach((pid) => process.kill(pid, 'SIGCONT'));
        thawed = true;
      };
      // A list that waits for the thaw ends then, late: the check below says so.
      let thawTimer: NodeJS.Timeout | undefined;
      let read: ListRead;
      try {
        read = await readList(services.urls[service], 2 * chars, () => {
          frozen.forEach((pid) => process.kill(pid, 'SIGSTOP'));
          frozenAt = performance.now();
          thawTimer = setTimeout(thaw, timeoutMs + 5_000);
        });
      } finally {
        clearTimeout(thawTimer);
        thaw();
      }
      const thawedAt = performance.now();
      let next: ListRead;
      do next = await readList(services.urls[service]);
      while (!isWhole(next) && performance.now() - thawedAt < RECOVER_WITHIN_MS);

      checks[`${service}: the list began 200 and the database froze in its middle`] =
        read.status === 200 && frozenAt !== undefined;
      checks[`${service}: the list was cut short (not ended as if whole)`] =
        !read.complete && read.bytes < count * chars;
      checks[`${service}: the cut came within DB_TIMEOUT_MS + 2 s of the freeze`] =
        frozenAt !== undefined && read.endedAt - frozenAt <= timeoutMs + 2_000;
      checks[`${service}: a list after the thaw was whole within 5 s`] =
        isWhole(next) && next.endedAt - thawedAt <= RECOVER_WITHIN_MS;
    }
    const cutLines = logLines(services.output()).filter((line) => line.msg === 'answer cut short');
    checks['each cut was logged at error level'] =
      cutLines.length === NOTES_SERVICES.length && cutLines.every((line) => line.level === 50);
    checks['the process kept running'] = services.child.exitCode === null;
    expectChecks(checks);
    expect(await services.stop()).toBe(0);
  }, 120_000);
});
