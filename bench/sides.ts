import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { send } from '../harness/http.js';
import { createScratchDatabase } from '../harness/postgres.js';
import { ROOT, startProcess, type ServiceUrls } from '../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../harness/postgres.js';
import { loadConfig } from '../server/config.js';
import { embeddedPostgresUrl } from '../server/db/embeddedPostgres.js';

/** The servers measured side by side: the project's three services, and the two peers. */
export type Peer = 'Koa' | 'Fastify';
export type SideName = 'project' | Peer;

/** A server: its process, where each service answers (a peer: all at one address), a session. */
export interface Side {
  name: SideName;
  pid: number;
  urls: ServiceUrls;
  cookie: string;
  stop(): Promise<void>;
}

// As `npm start` runs them, but request lines off (the peers log nothing either) and metrics on:
// every request measured. The password hash cost at its default (empty counts as unset).
const SERVICE_ENV = { LOG_LEVEL: 'warn', PASSWORD_HASH_COST: '', METRICS_PORT: '0' };
const config = loadConfig({ ...process.env, ...SERVICE_ENV });

// What this run started and has not stopped yet, for a run that ends early.
const running = new Set<Side>();
export const stopAll = () => Promise.allSettled([...running].map((side) => side.stop()));
function track(side: Side): Side {
  running.add(side);
  return { ...side, stop: () => (running.delete(side), side.stop()) };
}

/**
 * The compiled server, as `npm start` runs it, on a data folder of its own: its embedded
 * PostgreSQL, or with DATABASE_URL set a throwaway database there. `wrapper` runs its node.
 */
export async function startProject(wrapper?: string[]): Promise<Side & { databaseUrl: string }> {
  const dataDir = await temporaryDataDir();
  const scratch = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'bench')
    : undefined;
  const remove = async () => void (await scratch?.drop(), await removeDataDir(dataDir));
  // Under valgrind a start takes minutes, and a statement or a connection seconds.
  const slow: Record<string, string> = wrapper ? { DB_TIMEOUT_MS: '60000' } : {};
  const server = await startProcess({
    dataDir,
    form: 'compiled',
    env: { ...SERVICE_ENV, ...slow, DATABASE_URL: scratch?.url ?? '' },
    wrapper,
    readyTimeoutMs: wrapper ? 600_000 : undefined,
  }).catch(async (error: unknown) => {
    await remove();
    throw error;
  });
  const stop = async () => void (await server.stop(60_000), await remove());
  const side = track({ name: 'project', pid: server.pid, urls: server.urls, cookie: '', stop });
  const databaseUrl = scratch?.url ?? (await embeddedPostgresUrl(dataDir));
  return { ...side, cookie: await logIn(server.urls.auth), databaseUrl };
}

async function logIn(authUrl: string): Promise<string> {
  const { email, password } = config.auth.accounts[0]!;
  const json = { email, password };
  const reply = await send(authUrl, {
    method: 'POST',
    path: '/api/login',
    json,
    timeoutMs: 60_000,
  });
  const token = /(?:^|;\s*)token=([^;]+)/.exec(String(reply.headers['set-cookie']))?.[1];
  if (!token) throw new Error(`the benchmark's login failed: ${reply.status} ${reply.text}`);
  return `token=${token}`;
}

/** The peers compiled by esbuild, so that node runs them as plain JavaScript, as the services. */
export async function compilePeers(): Promise<{ folder: string; remove(): Promise<void> }> {
  // Under dist/, beside the repository's node_modules, where their imports are found.
  await fs.mkdir(path.join(ROOT, 'dist'), { recursive: true });
  const folder = await fs.mkdtemp(path.join(ROOT, 'dist', 'bench-peers-'));
  await build({
    entryPoints: ['koa', 'fastify'].map((name) => path.join(ROOT, 'bench', 'peers', `${name}.ts`)),
    outdir: folder,
    outExtension: { '.js': '.mjs' },
    platform: 'node',
    format: 'esm',
  });
  return { folder, remove: () => fs.rm(folder, { recursive: true, force: true }) };
}

/** A peer in a process of its own on `databaseUrl`, with a pool as large as the services'. */
export async function startPeer(
  name: Peer,
  { folder, databaseUrl: DATABASE_URL }: { folder: string; databaseUrl: string },
  wrapper: string[] = [],
): Promise<Side> {
  const token = randomBytes(24).toString('base64url');
  const script = path.join(folder, `${name.toLowerCase()}.mjs`);
  const [command, ...args] = [...wrapper, process.execPath, script];
  const poolMax = String(config.database.poolMax);
  const env = { ...process.env, DATABASE_URL, DB_POOL_MAX: poolMax, BENCH_TOKEN: token };
  const child = spawn(command!, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
    void exited.then(() => reject(new Error(`the ${name} peer exited:\n${output.slice(-2000)}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => void (child.kill('SIGTERM'), await exited);
  const urls = { auth: url, notes8080: url, notes8000: url };
  return track({ name, pid: child.pid!, urls, cookie: `token=${token}`, stop });
}
