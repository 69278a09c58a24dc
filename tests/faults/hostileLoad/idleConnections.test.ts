import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../../server/config.js';
import { RESERVED_DESCRIPTORS } from '../../../server/http/listen.js';
import { percentile, send } from '../../../harness/http.js';
import type { RunningProcess } from '../../../harness/processes.js';
import { range, scratchDatabase, seconds, startServices } from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks, passed, report } from '../report.js';
import { FULL, scale } from '../scale.js';

describe('6. Hostile load: idle connections', () => {
  const dataDir = useTemporaryDataDir();

  const HELD = scale(3_000, 19_000);
  const HEADERS_TIMEOUT_MS = scale(2_000, loadConfig({}).connections.headersTimeoutMs);
  const QUICK_MAX_CONNECTIONS = 1_000;
  const PROBE_LIMIT_MS = 2_000;
  const TIMEOUT_TOLERANCE_MS = 2_000;
  const BUDGET_SLACK = 100;

  test(
    `${HELD.toLocaleString('en')} idle connections from many addresses: ` +
      `every service keeps answering; connections that send nothing are closed`,
    async () => {
      const fileLimit = raiseOwnFileLimit();
      // This process's own sockets, the test runner's files and the probes must fit under its
      // limit.
      const count = Math.min(HELD, fileLimit.soft - 500);
      const url = await scratchDatabase();
      const env: Record<string, string> = {
        DATABASE_URL: url,
        ...(FULL
          ? {}
          : {
              MAX_CONNECTIONS: String(QUICK_MAX_CONNECTIONS),
              HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
            }),
      };
      const services = await startServices(dataDir(), env);
      // What the process gives each service when MAX_CONNECTIONS is unset (see connectionBudget in
      // main.ts).
      const serverLimit = fileLimitOf(services.pid);
      const budget = FULL
        ? Math.floor((serverLimit - RESERVED_DESCRIPTORS) / 3)
        : QUICK_MAX_CONNECTIONS;
      const port = Number(new URL(services.urls.notes8080).port);
      const filesBefore = await openFiles(services.pid);
      const overflowsBefore = await listenOverflows();

      const files = sampleOpenFiles(services.pid);
      let holding = true;
      const probing = probeWhile(services, () => holding);
      const flood = await holdIdleConnections(port, count);
      const lastOpened = Math.max(...flood.held.map((h) => h.openedAt));
      // Until the server has closed every one, or the header timeout has long passed for the last
      // opened.
      while (
        flood.held.some((h) => h.closedAt === undefined) &&
        performance.now() < lastOpened + HEADERS_TIMEOUT_MS + 3_000
      )
        await sleep(100);
      holding = false;
      const probes = await probing;
      const stillOpen = flood.held.filter((h) => h.closedAt === undefined).length;
      flood.held.forEach((h) => h.socket.destroy());
      const filesPeak = await files.stop();
      const overflows = (await listenOverflows()) - overflowsBefore;

      // Apart from the flood: one connection that never sends a byte.
      await sleep(500);
      const lone = await holdIdleConnections(port, 1, '127.0.0.1');
      const loneHeld = lone.held[0];
      while (
        loneHeld &&
        loneHeld.closedAt === undefined &&
        performance.now() - loneHeld.openedAt < HEADERS_TIMEOUT_MS + 3 * TIMEOUT_TOLERANCE_MS
      )
        await sleep(50);
      const loneClosedAfter =
        loneHeld?.closedAt === undefined ? Infinity : loneHeld.closedAt - loneHeld.openedAt;
      loneHeld?.socket.destroy();

      const lifetimes = flood.held
        .filter((h) => h.closedAt !== undefined)
        .map((h) => h.closedAt! - h.openedAt);
      // Closed well before the header timeout: the budget made room for a newer connection.
      const early = lifetimes.filter((ms) => ms < HEADERS_TIMEOUT_MS - 500).length;
      const byService = (['8080 /ready', '8000 /health', 'auth /api/me'] as const).map((name) => {
        const mine = probes.filter((p) => p.name === name);
        const good = mine.filter((p) => p.ok && p.ms <= PROBE_LIMIT_MS);
        return {
          name,
          total: mine.length,
          good: good.length,
          slowest: Math.max(...mine.map((p) => p.ms)),
          bad: mine.filter((p) => !(p.ok && p.ms <= PROBE_LIMIT_MS)),
        };
      });

      const checks: Record<string, boolean> = {};
      for (const probe of byService)
        checks[`${probe.name} answered within 2 s every time`] =
          probe.total >= 3 && probe.good === probe.total;
      checks['a connection that sends nothing is closed within the header timeout ± 2 s'] =
        Math.abs(loneClosedAfter - HEADERS_TIMEOUT_MS) <= TIMEOUT_TOLERANCE_MS;
      // Sampled, so a lower bound of the peak; the slack covers the pools' connections and the
      // probes.
      checks['the server held no more connections than its budget'] =
        filesPeak <= filesBefore + budget + BUDGET_SLACK;
      checks['the process kept running'] = services.child.exitCode === null;

      const failures =
        Object.entries(flood.failures)
          .map(([code, n]) => `${n} ${code}`)
          .join(', ') || 'none';
      report({
        key: '6b',
        case: '6. Hostile load: idle connections',
        done:
          `${count.toLocaleString('en')} TCP connections opened to 8080 from ` +
          `127.0.0.2–127.0.0.254 in turn (${flood.batch} at a time, ${flood.pauseMs} ms ` +
          `apart), none sending a byte; this test process's open-files ` +
          `limit ${fileLimit.before}` +
          (fileLimit.before < fileLimit.soft ? `, raised to ${fileLimit.soft}` : '') +
          ` ` +
          `(hard ${fileLimit.hard}). The process started ` +
          `with ` +
          (FULL
            ? `the default budget (MAX_CONNECTIONS unset: ${budget.toLocaleString('en')} ` +
              `per service from its open-files limit ${serverLimit})`
            : `MAX_CONNECTIONS=${QUICK_MAX_CONNECTIONS}`) +
          ` ` +
          `and HEADERS_TIMEOUT_MS=${HEADERS_TIMEOUT_MS}${FULL ? ' (the default)' : ''}. ` +
          `Meanwhile, every 250 ms, a new connection each to ` +
          `8080 /ready, 8000 /health and auth /api/me. Then, ` +
          `apart, one more connection that sends nothing.`,
        expected:
          `Every probe answers within 2 s while the connections are held; the ` +
          `server holds no more than its budget (${budget.toLocaleString('en')}) ` +
          `of them, closing the oldest idle ones; the lone idle connection is ` +
          `closed within the header timeout ± 2 s; the process keeps running.`,
        observed:
          `Opened ${flood.held.length.toLocaleString('en')} in ${seconds(flood.openedMs)} ` +
          `s (failed to open: ${failures}); at most ${flood.peakOpen.toLocaleString('en')} ` +
          `open at once from the client's side; the server's open files ${filesBefore} ` +
          `before, peak ${filesPeak.toLocaleString('en')}; connections the kernel dropped ` +
          `because a listen queue was full (TcpExt ListenOverflows, whole ` +
          `machine): ${overflows}. The server ` +
          `closed ${lifetimes.length.toLocaleString('en')} of them ` +
          `(${early.toLocaleString('en')} within ${seconds(HEADERS_TIMEOUT_MS - 500)} s of ` +
          `opening: the budget; ${(lifetimes.length - early).toLocaleString('en')} later: ` +
          `the header timeout; lifetimes p50 ${seconds(percentile(lifetimes, 50))} s, ` +
          `max ${seconds(Math.max(...lifetimes))} s); ${stillOpen} still ` +
          `open ${seconds(HEADERS_TIMEOUT_MS + 3_000)} s after the last was opened. ` +
          `Probes: ${byService
            .map(
              (p) =>
                `${p.name} ${p.good}/${p.total} within 2 s (slowest ${Math.round(p.slowest)} ms${
                  p.bad.length
                    ? `; e.g. ${p.bad
                        .slice(0, 2)
                        .map((b) => b.error ?? b.status)
                        .join(', ')}`
                    : ''
                })`,
            )
            .join('; ')}. The lone idle connection was closed ` +
          `after ` +
          (Number.isFinite(loneClosedAfter)
            ? `${Math.round(loneClosedAfter)} ms`
            : 'never (within the wait)') +
          `. ` +
          `Process still running: ${checks['the process kept running']}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    scale(180_000, 600_000),
  );
});

/** The soft and hard open-files limits of `pid` (`self` for this process). */
function fileLimits(pid: number | 'self'): { soft: number; hard: number } {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
  const value = (text: string | undefined) =>
    text === undefined || text === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(text);
  return { soft: value(line?.[1]), hard: value(line?.[2]) };
}

const fileLimitOf = (pid: number) => fileLimits(pid).soft;

/**
 * This process's open-files limit, its soft limit first raised to the hard one (as the server does
 * for itself).
 */
function raiseOwnFileLimit(): { before: number; soft: number; hard: number } {
  const { soft: before, hard } = fileLimits('self');
  if (before < hard) execFileSync('prlimit', [`--pid=${process.pid}`, `--nofile=${hard}:${hard}`]);
  return { before, ...fileLimits('self') };
}

/**
 * The kernel's count of connections dropped because a listen queue was full (TcpExt
 * ListenOverflows).
 */
async function listenOverflows(): Promise<number> {
  const lines = (await fs.readFile('/proc/net/netstat', 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('TcpExt:'));
  const [names, values] = lines.map((line) => line.split(/\s+/));
  const index = names?.indexOf('ListenOverflows') ?? -1;
  return index < 0 ? NaN : Number(values?.[index]);
}

async function openFiles(pid: number): Promise<number> {
  return (await fs.readdir(`/proc/${pid}/fd`).catch(() => [])).length;
}

/** Samples how many files `pid` holds open until stopped; `stop()` gives the most seen. */
function sampleOpenFiles(pid: number, intervalMs = 250): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      peak = Math.max(peak, await openFiles(pid));
      await sleep(intervalMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await sampling;
      return peak;
    },
  };
}

interface HeldConnection {
  socket: net.Socket;
  openedAt: number;
  closedAt?: number;
}

/**
 * `count` connections to `port` that send nothing, bound to the source addresses 127.0.0.2 to
 * 127.0.0.254 in turn (or to `from`), opened `batch` at a time with a pause after each batch: a
 * connection counts as open once the kernel has queued it, before the server accepts it, so
 * batches sent back to back would fill the listen queue (511) and measure the kernel dropping
 * connections rather than the server holding them. Each records when it opened and when the
 * server closed it.
 */
async function holdIdleConnections(
  port: number,
  count: number,
  from?: string,
  batch = 100,
  pauseMs = 20,
) {
  const held: HeldConnection[] = [];
  const failures: Record<string, number> = {};
  let open = 0;
  let peakOpen = 0;
  const connect = (index: number) =>
    new Promise<void>((resolve) => {
      const socket = net.connect({
        port,
        host: '127.0.0.1',
        localAddress: from ?? `127.0.0.${2 + (index % 253)}`,
      });
      let connection: HeldConnection | undefined;
      socket.once('connect', () => {
        connection = { socket, openedAt: performance.now() };
        held.push(connection);
        peakOpen = Math.max(peakOpen, ++open);
        resolve();
      });
      socket.once('close', () => {
        if (connection) {
          connection.closedAt = performance.now();
          open--;
        }
        resolve();
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        if (!connection)
          failures[error.code ?? error.message] = (failures[error.code ?? error.message] ?? 0) + 1;
      });
      // Reading, so that the server's close is seen at once.
      socket.resume();
    });
  const started = performance.now();
  for (let first = 0; first < count; first += batch) {
    await Promise.all(
      range(Math.min(batch, count - first)).map((offset) => connect(first + offset)),
    );
    await sleep(pauseMs);
  }
  return {
    held,
    failures,
    batch,
    pauseMs,
    openedMs: performance.now() - started,
    get peakOpen() {
      return peakOpen;
    },
  };
}

interface Probe {
  name: '8080 /ready' | '8000 /health' | 'auth /api/me';
  ok: boolean;
  ms: number;
  status?: number;
  error?: string;
}

/** Every 250 ms, a request on a new connection to each service, until `going()` says stop. */
async function probeWhile(services: RunningProcess, going: () => boolean): Promise<Probe[]> {
  const probes: Probe[] = [];
  const targets = [
    { name: '8080 /ready', base: services.urls.notes8080, path: '/ready', status: 200 },
    { name: '8000 /health', base: services.urls.notes8000, path: '/health', status: 200 },
    { name: 'auth /api/me', base: services.urls.auth, path: '/api/me', status: 401 },
  ] as const;
  while (going()) {
    await Promise.all(
      targets.map(async ({ name, base, path, status }) => {
        const startedAt = performance.now();
        try {
          const reply = await send(base, { method: 'GET', path, timeoutMs: 10_000 });
          probes.push({ name, ok: reply.status === status, ms: reply.ms, status: reply.status });
        } catch (error) {
          probes.push({
            name,
            ok: false,
            ms: performance.now() - startedAt,
            error: (error as NodeJS.ErrnoException).code ?? String(error),
          });
        }
      }),
    );
    await sleep(250);
  }
  return probes;
}
