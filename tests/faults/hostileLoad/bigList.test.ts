import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { send } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
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
import { expectChecks, type Checks } from '../../support/checks.js';

const MB = 1_000_000;
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

describe('6. Hostile load: the list under big notes', () => {
  const dataDir = useTemporaryDataDir();

  test(
    `GET /notes of ${BIG_NOTES} notes of 1 MiB: ${FULL_READERS} full readers ` +
      `and ${STALLED_READERS} that stop reading; memory stays bounded`,
    async () => {
      const url = await scratchDatabase();
      const services = await startServices(dataDir(), {
        DATABASE_URL: url,
        CLIENT_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
      });
      // The process migrated the schemas at start: the notes go in now, through SQL, each of
      // random base64.
      await Promise.all(
        NOTES_SERVICES.map((service) =>
          withClient(url, async (client) => {
            for (let i = 0; i < BIG_NOTES; i++)
              await client.query(
                `INSERT INTO ${service}.notes (title, ${TEXT_FIELD[service]}) VALUES ($1, $2)`,
                [`big note ${i}`, randomBytes((NOTE_CHARS * 3) / 4).toString('base64')],
              );
          }),
        ),
      );
      await sleep(1_000);
      const idleRss = await rssBytes(services.pid);

      const checks: Checks = {};
      for (const service of NOTES_SERVICES) {
        const base = services.urls[service];
        const port = Number(new URL(base).port);
        const sampler = sampleRss(services.pid);
        // Each reader a client (an address) of its own: one client streams two lists at most.
        const stalled = await Promise.all(
          range(STALLED_READERS).map((i) => openStalledReader(port, `127.0.1.${i + 1}`)),
        );
        const reads = await Promise.all(
          range(FULL_READERS).map((i) => readsWholeList(base, service, `127.0.2.${i + 1}`)),
        );
        // Watched until twice the timeout after the last byte sent: a late cut is seen, not
        // missed.
        const cutAfterMs = await Promise.all(
          stalled.map(async (socket) => {
            const watched = await watchUntilClosed(
              port,
              socket.localPort!,
              2 * IDLE_TIMEOUT_MS + CUT_MARGIN_MS,
            );
            socket.destroy();
            return (watched.closedAt ?? Infinity) - watched.lastSentAt;
          }),
        );
        const peakRss = await sampler.stop();
        checks[`${service}: every full read answered 200 with all ${BIG_NOTES} notes`] =
          reads.every(Boolean);
        checks[`${service}: RSS growth over idle < ${GROWTH_LIMIT / MB} MB`] =
          peakRss - idleRss < GROWTH_LIMIT;
        checks[
          `${service}: the stalled readers were cut within the idle ` +
            `timeout + 2 s of the last byte the server sent them`
        ] = cutAfterMs.every((ms) => ms <= IDLE_TIMEOUT_MS + CUT_MARGIN_MS);
      }
      checks['the process kept running'] = services.child.exitCode === null;
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    180_000,
  );
});

/** Whether GET /notes answered 200 with all the distinct notes, each of its whole text. */
async function readsWholeList(base: string, service: NotesService, localAddress: string) {
  const reply = await send(base, {
    method: 'GET',
    path: '/notes',
    timeoutMs: 300_000,
    localAddress,
  }).catch(() => undefined);
  const list = reply?.status === 200 ? (reply.json as Record<string, unknown>[]) : undefined;
  return (
    Array.isArray(list) &&
    list.length === BIG_NOTES &&
    new Set(list.map((note) => note.id)).size === BIG_NOTES &&
    list.every(
      (note) =>
        typeof note.id === 'number' && (note[TEXT_FIELD[service]] as string)?.length === NOTE_CHARS,
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
