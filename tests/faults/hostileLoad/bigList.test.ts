import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { send } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import { type RunningProcess } from '../../../harness/processes.js';
import { rssBytes, sampleRss } from '../../../harness/procfs.js';
import { watchUntilClosed } from '../../../harness/tcpTable.js';
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

const MB = 1_000_000;

describe('6. Hostile load: the list under big notes', () => {
  const dataDir = useTemporaryDataDir();

  const BIG_NOTES = 120;
  const NOTE_CHARS = 2 ** 20;
  const FULL_READERS = 4;
  const STALLED_READERS = 4;
  // 8 readers of 126 MB each that held their lists would keep over 1 GB. What the figure measures
  // besides is the collector's pace, which varies from run to run, and the second service's run
  // starts from what the first left to collect: so 300 MB.
  const GROWTH_LIMIT = 300 * MB;
  // Counted from when the server last put bytes into the connection, as the kernel saw it: the
  // server looks every second, and a loaded machine may run that look a second late.
  const CUT_MARGIN_MS = 2_000;
  const IDLE_TIMEOUT_MS = 3_000;

  test(
    `GET /notes of ${BIG_NOTES} notes of 1 MiB: ${FULL_READERS} full readers ` +
      `and ${STALLED_READERS} that stop reading; memory stays bounded`,
    async () => {
      const url = await scratchDatabase();
      const services = await startServices(dataDir(), {
        DATABASE_URL: url,
        CLIENT_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
      });
      // The process migrated the schemas at start: the notes go in now, through SQL.
      await Promise.all(
        NOTES_SERVICES.map((service) => seedBigNotes(url, service, BIG_NOTES, NOTE_CHARS)),
      );
      await sleep(1_000);
      const idleRss = await rssBytes(services.pid);

      const checks: Record<string, boolean> = {};
      for (const service of NOTES_SERVICES) {
        const run = await bigListRun(service, services);
        checks[`${service}: every full read answered 200 with all ${BIG_NOTES} notes`] =
          run.reads.length === FULL_READERS && run.reads.every(Boolean);
        checks[`${service}: RSS growth over idle < ${GROWTH_LIMIT / MB} MB`] =
          run.peakRss - idleRss < GROWTH_LIMIT;
        checks[
          `${service}: the stalled readers were cut within the idle ` +
            `timeout + 2 s of the last byte the server sent them`
        ] = run.cutAfterMs.every((ms) => ms !== undefined && ms <= IDLE_TIMEOUT_MS + CUT_MARGIN_MS);
      }
      checks['the process kept running'] = services.child.exitCode === null;
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    180_000,
  );

  /** One service's list read by full readers while stalled readers hold their answers. */
  async function bigListRun(service: NotesService, services: RunningProcess) {
    const base = services.urls[service];
    const port = Number(new URL(base).port);
    const sampler = sampleRss(services.pid);
    // Each reader a client (an address) of its own: one client streams two lists at most.
    const stalled = await Promise.all(
      range(STALLED_READERS).map((i) => openStalledReader(port, `127.0.1.${i + 1}`)),
    );
    const reads = await Promise.all(
      range(FULL_READERS).map((i) =>
        readWholeList(base, service, BIG_NOTES, NOTE_CHARS, `127.0.2.${i + 1}`),
      ),
    );
    // Watched until twice the timeout after the last byte sent: a late cut is seen, not missed.
    const cutAfterMs = await Promise.all(
      stalled.map(async (socket) => {
        const { lastSentAt, closedAt } = await watchUntilClosed(
          port,
          socket.localPort!,
          2 * IDLE_TIMEOUT_MS + CUT_MARGIN_MS,
        );
        socket.destroy();
        return closedAt === undefined ? undefined : closedAt - lastSentAt;
      }),
    );
    return { reads, cutAfterMs, peakRss: await sampler.stop() };
  }
});

/**
 * `count` notes of `chars` characters of random base64 each, through SQL on the service's schema.
 */
async function seedBigNotes(
  url: string,
  service: NotesService,
  count: number,
  chars: number,
): Promise<void> {
  await withClient(url, async (client) => {
    for (let i = 0; i < count; i++) {
      const text = randomBytes((chars * 3) / 4).toString('base64');
      await client.query(
        `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]}) VALUES ($1, $2)`,
        [`big note ${i}`, text],
      );
    }
  });
}

/** Whether GET /notes answered 200 with `count` distinct notes of `chars` characters. */
async function readWholeList(
  base: string,
  service: NotesService,
  count: number,
  chars: number,
  localAddress: string,
): Promise<boolean> {
  const reply = await send(base, {
    method: 'GET',
    path: '/notes',
    timeoutMs: 300_000,
    localAddress,
  }).catch(() => undefined);
  const list = reply?.status === 200 ? (reply.json as Record<string, unknown>[]) : undefined;
  return (
    Array.isArray(list) &&
    list.length === count &&
    new Set(list.map((note) => note.id)).size === count &&
    list.every(
      (note) =>
        typeof note.id === 'number' && (note[TEXT_FIELD[service]] as string)?.length === chars,
    )
  );
}

/** A raw connection that sends GET /notes and never reads the answer. */
function openStalledReader(port: number, localAddress: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.pause();
      socket.write('GET /notes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      resolve(socket);
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}
