import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { send } from '../../../harness/http.js';
import { withClient } from '../../../harness/postgres.js';
import { rssBytes, sampleRss, type RunningProcess } from '../../../harness/processes.js';
import { watchUntilClosed } from '../../../harness/tcpTable.js';
import {
  NOTES_SERVICES,
  range,
  scratchDatabase,
  seconds,
  startServices,
  TEXT_FIELD,
  type NotesService,
} from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks, passed, report } from '../report.js';
import { FULL, scale } from '../scale.js';

const MB = 1_000_000;
const mb = (bytes: number) => (bytes / MB).toFixed(1);

describe('6. Hostile load: the list under big notes', () => {
  const dataDir = useTemporaryDataDir();

  const BIG_NOTES = scale(24, 120);
  const NOTE_CHARS = 2 ** 20;
  const FULL_READERS = 4;
  const STALLED_READERS = 4;
  // The full run checks the target. The quick form guards against requests that hold their list:
  // 8 readers of 25 MB each would keep 200 to 400 MB with their copies, before any garbage. What it
  // measures besides is the collector's pace, which varies from run to run (151 to 222 MB of
  // growth in five repeated runs here), and the second service's run starts from what the first
  // left to collect: so 300 MB.
  const GROWTH_LIMIT = scale(300, 150) * MB;
  const SETTLED_MARGIN = 50 * MB;
  const SETTLE_WITHIN_MS = 10_000;
  // Memory the process freed may stay with it: on Node 24 the pages a burst took are kept and
  // reused (there, RSS did not move in the 10 s after the cut even with a full collection forced
  // in them). What must hold is that they are reused: the same load again, on the same service,
  // peaks less than this over the first round. The full form runs each service's load twice.
  const ROUNDS = scale(1, 2);
  const REUSED_MARGIN = 50 * MB;
  // Counted from when the server last put bytes into the connection, as the kernel saw it: the
  // server looks every second, and a loaded machine may run that look a second late.
  const CUT_MARGIN_MS = 2_000;
  // The default in the full form; a short one keeps the quick form short.
  const IDLE_TIMEOUT_MS = scale(3_000, loadConfig({}).connections.idleTimeoutMs);

  test(
    `GET /notes of ${BIG_NOTES} notes of 1 MiB: ${FULL_READERS} full readers ` +
      `and ${STALLED_READERS} that stop reading; memory stays bounded and comes back`,
    async () => {
      const url = await scratchDatabase();
      const services = await startServices(dataDir(), {
        DATABASE_URL: url,
        ...(FULL ? {} : { CLIENT_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) }),
      });
      // The process migrated the schemas at start: the notes go in now, through SQL.
      await Promise.all(
        NOTES_SERVICES.map((service) => seedBigNotes(url, service, BIG_NOTES, NOTE_CHARS)),
      );
      await sleep(1_000);
      const idleRss = await rssBytes(services.pid);

      const runs: BigListRun[] = [];
      for (const service of NOTES_SERVICES)
        for (const round of range(ROUNDS))
          runs.push(await bigListRun(service, round + 1, services, idleRss));

      const checks: Record<string, boolean> = {};
      for (const run of runs) {
        const first = runs.find((other) => other.service === run.service)!;
        const name = ROUNDS > 1 ? `${run.service} round ${run.round}` : run.service;
        checks[`${name}: every full read answered 200 with all ${BIG_NOTES} notes`] =
          run.reads.length === FULL_READERS && run.reads.every((read) => read.complete);
        checks[`${name}: RSS growth over idle < ${GROWTH_LIMIT / MB} MB`] =
          run.peakRss - idleRss < GROWTH_LIMIT;
        checks[
          `${name}: the stalled readers were cut within the idle ` +
            `timeout + 2 s of the last byte the server sent them`
        ] = run.stalled.every(
          (s) => s.cutAfterMs !== undefined && s.cutAfterMs <= IDLE_TIMEOUT_MS + CUT_MARGIN_MS,
        );
        if (run !== first)
          checks[`${name}: RSS peak < ${REUSED_MARGIN / MB} MB over round 1's`] =
            run.peakRss - first.peakRss < REUSED_MARGIN;
      }
      checks['the process kept running'] = services.child.exitCode === null;

      const listBytes = BIG_NOTES * NOTE_CHARS;
      const describeRun = (run: BigListRun) => {
        const reads = run.reads
          .map((read) => (read.complete ? `${seconds(read.ms)} s` : `FAILED (${read.problem})`))
          .join(', ');
        const allCut = run.stalled.every((s) => s.cutAfterMs !== undefined);
        const cuts = run.stalled
          .map((s) =>
            s.cutAfterMs === undefined
              ? 'not'
              : `${seconds(s.cutAfterMs)} s (${seconds(s.cutAfterRequestMs!)} s after its request)`,
          )
          .join(', ');
        const received = allCut
          ? `, and had received ${run.stalled.map((s) => mb(s.receivedBytes)).join(', ')} ` +
            `MB each of the ${mb(listBytes)} MB`
          : '';
        const since = allCut
          ? 'the cut'
          : `giving up on the cut (${seconds(2 * IDLE_TIMEOUT_MS + CUT_MARGIN_MS)} ` +
            `s after the last byte sent)`;
        const settled =
          run.settledAfterMs !== undefined
            ? `back within 50 MB of idle ${seconds(run.settledAfterMs)} ` +
              `s after ${since} (${mb(run.settledRss)} MB)`
            : `still more than 50 MB over idle ${SETTLE_WITHIN_MS / 1000} s ` +
              `after ${since}: ${mb(run.settledRss)} MB then ` +
              `(lowest ${mb(run.lowestAfterCut)} MB)`;
        return (
          `${run.service}${ROUNDS > 1 ? ` round ${run.round}` : ''}: full reads ` +
          `of ${mb(listBytes)} MB each took ${reads}; RSS peak ${mb(run.peakRss)} ` +
          `MB, growth ${mb(run.peakRss - idleRss)} MB; stalled readers cut ${cuts} ` +
          `after the server last put bytes into their connection (the server's ` +
          `side of each, in the kernel's table: its send queue last changed, ` +
          `then it was no longer established)${received}; RSS ${settled}.`
        );
      };
      report({
        // One row per major version of Node: their collectors and allocators give memory back
        // differently.
        key: `6a node${process.versions.node.split('.')[0]}`,
        case:
          `6. Hostile load: the list under big notes ` +
          `(Node ${process.versions.node.split('.')[0]})`,
        done:
          `${BIG_NOTES} notes of 1 MiB of random base64 seeded through SQL in each notes ` +
          `service's table; the process (\`startProcess\`, compiled, ` +
          `Node ${process.versions.node}, on a scratch database, ` +
          `CLIENT_IDLE_TIMEOUT_MS=${IDLE_TIMEOUT_MS}${FULL ? ', the default' : ''}); against ` +
          `each service in ` +
          `turn${ROUNDS > 1 ? `, ${ROUNDS} rounds each` : ''}, ${FULL_READERS} concurrent ` +
          `full reads of GET /notes while ${STALLED_READERS} raw-socket clients sent GET ` +
          `/notes and never read. RSS of the server process sampled every 50 ms, and ` +
          `for ${SETTLE_WITHIN_MS / 1000} s after the cut.`,
        expected:
          `Every full read answers 200 with a parseable array of all ${BIG_NOTES} ` +
          `notes; RSS grows < ${GROWTH_LIMIT / MB} MB over idle; the server cuts ` +
          `the stalled readers within the idle timeout + 2 s of the last byte it ` +
          `sent them` +
          (ROUNDS > 1
            ? `; a second round peaks < ${REUSED_MARGIN / MB} MB over the first ` +
              `(what was freed is reused)`
            : '') +
          `. ` +
          `How soon RSS comes back after the cut (the ` +
          `allocator's and collector's pace) is reported.`,
        observed:
          `Idle RSS ${mb(idleRss)} MB. ${runs.map(describeRun).join(' ')} ` +
          `Process still running: ${checks['the process kept running']}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    scale(180_000, 600_000),
  );

  interface BigListRun {
    service: NotesService;
    round: number;
    reads: { complete: boolean; ms: number; problem?: string }[];
    stalled: Stalled[];
    peakRss: number;
    settledAfterMs?: number;
    settledRss: number;
    lowestAfterCut: number;
  }

  /**
   * One service's list read by full readers while stalled readers hold their answers; then the cut
   * and the memory after it.
   */
  async function bigListRun(
    service: NotesService,
    round: number,
    services: RunningProcess,
    idleRss: number,
  ): Promise<BigListRun> {
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

    // Watched until twice the timeout after the last byte sent: a late cut is seen and reported,
    // not missed.
    await Promise.all(
      stalled.map(async (s) => {
        const { lastSentAt, closedAt } = await watchUntilClosed(
          port,
          s.localPort,
          2 * IDLE_TIMEOUT_MS + CUT_MARGIN_MS,
        );
        if (closedAt === undefined) return;
        s.cutAfterMs = closedAt - lastSentAt;
        s.cutAfterRequestMs = closedAt - s.sentAt;
      }),
    );
    const peakRss = await sampler.stop();
    const cutAt = performance.now();
    // What a cut connection still carries shows its answer ended short; one still open is closed
    // by the client instead, so that the server does not stream the rest while memory settles.
    const drained = Promise.all(
      stalled.map((s) => (s.cutAfterMs === undefined ? s.socket.destroy() : drainStalled(s))),
    );

    let settledAfterMs: number | undefined;
    let settledRss = NaN;
    let lowestAfterCut = Infinity;
    while (performance.now() - cutAt <= SETTLE_WITHIN_MS) {
      settledRss = await rssBytes(services.pid);
      lowestAfterCut = Math.min(lowestAfterCut, settledRss);
      if (settledRss - idleRss <= SETTLED_MARGIN) {
        settledAfterMs = performance.now() - cutAt;
        break;
      }
      await sleep(200);
    }
    await drained;
    return { service, round, reads, stalled, peakRss, settledAfterMs, settledRss, lowestAfterCut };
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

/**
 * GET /notes read to its end and parsed: complete when it is a 200 holding `count` distinct notes
 * of `chars` characters.
 */
async function readWholeList(
  base: string,
  service: NotesService,
  count: number,
  chars: number,
  localAddress: string,
): Promise<{ complete: boolean; ms: number; problem?: string }> {
  const startedAt = performance.now();
  try {
    const reply = await send(base, {
      method: 'GET',
      path: '/notes',
      timeoutMs: 300_000,
      localAddress,
    });
    const ms = performance.now() - startedAt;
    if (reply.status !== 200) return { complete: false, ms, problem: `status ${reply.status}` };
    const list = reply.json as { id: number; [field: string]: unknown }[] | undefined;
    if (!Array.isArray(list))
      return {
        complete: false,
        ms,
        problem: `${reply.body.length} bytes that do not parse as a JSON array`,
      };
    const whole = list.every(
      (note) =>
        typeof note.id === 'number' && (note[TEXT_FIELD[service]] as string)?.length === chars,
    );
    const distinct = new Set(list.map((note) => note.id)).size;
    if (list.length !== count || distinct !== count || !whole)
      return {
        complete: false,
        ms,
        problem: `${list.length} notes (${distinct} distinct, all whole: ${whole})`,
      };
    return { complete: true, ms };
  } catch (error) {
    return { complete: false, ms: performance.now() - startedAt, problem: String(error) };
  }
}

interface Stalled {
  socket: net.Socket;
  localPort: number;
  sentAt: number;
  /** From the last byte the server put into the connection until its side was seen closed. */
  cutAfterMs?: number;
  /** From the request until then. */
  cutAfterRequestMs?: number;
  receivedBytes: number;
}

/** A raw connection that sends GET /notes and never reads the answer. */
function openStalledReader(port: number, localAddress: string): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.pause();
      socket.write('GET /notes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      resolve({
        socket,
        localPort: socket.localPort!,
        sentAt: performance.now(),
        receivedBytes: 0,
      });
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

/** Reads what a stalled connection still carries until it ends (or 10 s pass), then closes it. */
async function drainStalled(stalled: Stalled): Promise<void> {
  const { socket } = stalled;
  const ended = new Promise((resolve) => socket.once('close', resolve));
  socket.on('data', (chunk: Buffer) => (stalled.receivedBytes += chunk.length));
  socket.resume();
  await Promise.race([ended, sleep(10_000)]);
  socket.destroy();
}
