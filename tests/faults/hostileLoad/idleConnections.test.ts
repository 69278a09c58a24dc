import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { send } from '../../../harness/http.js';
import type { RunningProcess } from '../../../harness/processes.js';
import { range, scratchDatabase, startServices } from '../../support/hostileLoad.js';
import { useTemporaryDataDir } from '../../support/services.js';
import { expectChecks } from '../../support/checks.js';

const HELD = 3_000;
const HEADERS_TIMEOUT_MS = 2_000;
const MAX_CONNECTIONS = 1_000;
const PROBE_LIMIT_MS = 2_000;
const TIMEOUT_TOLERANCE_MS = 2_000;
// The pools' connections and the probes.
const BUDGET_SLACK = 100;

describe('6. Hostile load: idle connections', () => {
  const dataDir = useTemporaryDataDir();

  test(
    `${HELD.toLocaleString('en')} idle connections from many addresses: ` +
      `every service keeps answering; connections that send nothing are closed`,
    async () => {
      // This process's own sockets, the test runner's files and the probes must fit under its
      // limit.
      const count = Math.min(HELD, raiseOwnFileLimit() - 500);
      const services = await startServices(dataDir(), {
        DATABASE_URL: await scratchDatabase(),
        MAX_CONNECTIONS: String(MAX_CONNECTIONS),
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      });
      const port = Number(new URL(services.urls.notes8080).port);
      const openFiles = async () =>
        (await fs.readdir(`/proc/${services.pid}/fd`).catch(() => [])).length;
      const filesBefore = await openFiles();
      let filesPeak = 0;
      let holding = true;
      // How many files the server holds, sampled: a lower bound of the peak.
      const sampling = (async () => {
        while (holding) {
          filesPeak = Math.max(filesPeak, await openFiles());
          await sleep(250);
        }
      })();
      const probing = probeWhile(services, () => holding);
      const held = await holdIdleConnections(port, count);
      // Until the server has closed every one, or the header timeout has long passed for the
      // last opened.
      const lastOpened = Math.max(...held.map((h) => h.openedAt));
      while (
        held.some((h) => h.closedAt === undefined) &&
        performance.now() < lastOpened + HEADERS_TIMEOUT_MS + 3_000
      )
        await sleep(100);
      holding = false;
      const [probes] = await Promise.all([probing, sampling]);
      held.forEach((h) => h.socket.destroy());

      // Apart from the flood: one connection that never sends a byte.
      await sleep(500);
      const [lone] = await holdIdleConnections(port, 1, '127.0.0.1');
      expect(lone, 'a lone connection opened').toBeDefined();
      while (
        lone!.closedAt === undefined &&
        performance.now() - lone!.openedAt < HEADERS_TIMEOUT_MS + 3 * TIMEOUT_TOLERANCE_MS
      )
        await sleep(50);
      lone!.socket.destroy();

      const checks: Record<string, boolean> = {};
      for (const name of ['8080 /ready', '8000 /health', 'auth /api/me']) {
        const mine = probes.filter((p) => p.name === name);
        checks[`${name} answered within 2 s every time`] =
          mine.length >= 3 && mine.every((p) => p.ok && p.ms <= PROBE_LIMIT_MS);
      }
      checks['a connection that sends nothing is closed within the header timeout ± 2 s'] =
        Math.abs((lone!.closedAt ?? Infinity) - lone!.openedAt - HEADERS_TIMEOUT_MS) <=
        TIMEOUT_TOLERANCE_MS;
      checks['the server held no more connections than its budget'] =
        filesPeak <= filesBefore + MAX_CONNECTIONS + BUDGET_SLACK;
      checks['the process kept running'] = services.child.exitCode === null;
      expectChecks(checks);
      expect(await services.stop()).toBe(0);
    },
    180_000,
  );
});

/** This process's open-files limit, raised to its hard limit (as the server does for itself). */
function raiseOwnFileLimit(): number {
  const limits = () => {
    const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const value = (text?: string) =>
      text === undefined || text === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(text);
    return { soft: value(line?.[1]), hard: value(line?.[2]) };
  };
  const { soft, hard } = limits();
  if (soft < hard) execFileSync('prlimit', [`--pid=${process.pid}`, `--nofile=${hard}:${hard}`]);
  return limits().soft;
}

interface HeldConnection {
  socket: net.Socket;
  openedAt: number;
  closedAt?: number;
}

/**
 * `count` connections to `port` that send nothing, bound to the source addresses 127.0.0.2 to
 * 127.0.0.254 in turn (or to `from`), opened 100 at a time with a pause after each batch: a
 * connection counts as open once the kernel has queued it, before the server accepts it, so
 * batches sent back to back would fill the listen queue (511) and measure the kernel dropping
 * connections rather than the server holding them. Each records when it opened and when the
 * server closed it.
 */
async function holdIdleConnections(port: number, count: number, from?: string) {
  const held: HeldConnection[] = [];
  const connect = (index: number) =>
    new Promise<void>((resolve) => {
      const localAddress = from ?? `127.0.0.${2 + (index % 253)}`;
      const socket = net.connect({ port, host: '127.0.0.1', localAddress });
      let connection: HeldConnection | undefined;
      socket.once('connect', () => {
        held.push((connection = { socket, openedAt: performance.now() }));
        resolve();
      });
      socket.once('close', () => {
        if (connection) connection.closedAt = performance.now();
        resolve();
      });
      socket.on('error', () => undefined);
      // Reading, so that the server's close is seen at once.
      socket.resume();
    });
  for (let first = 0; first < count; first += 100) {
    await Promise.all(range(Math.min(100, count - first)).map((offset) => connect(first + offset)));
    await sleep(20);
  }
  return held;
}

/** Every 250 ms, a request on a new connection to each service, until `going()` says stop. */
async function probeWhile(services: RunningProcess, going: () => boolean) {
  const probes: { name: string; ok: boolean; ms: number }[] = [];
  const targets = [
    { name: '8080 /ready', base: services.urls.notes8080, path: '/ready', status: 200 },
    { name: '8000 /health', base: services.urls.notes8000, path: '/health', status: 200 },
    { name: 'auth /api/me', base: services.urls.auth, path: '/api/me', status: 401 },
  ];
  while (going()) {
    await Promise.all(
      targets.map(async ({ name, base, path, status }) => {
        const startedAt = performance.now();
        const reply = await send(base, { method: 'GET', path, timeoutMs: 10_000 }).catch(() => {});
        const ms = reply?.ms ?? performance.now() - startedAt;
        probes.push({ name, ok: reply?.status === status, ms });
      }),
    );
    await sleep(250);
  }
  return probes;
}
