import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from '../harness/processes.js';

/** How the peer is named where its figures are shown. */
export const PEER = 'Fastify + pg';

export interface PeerProcess {
  url: string;
  pid: number;
  /** The session cookie its `GET /api/me` knows. */
  cookie: string;
  stop(): Promise<void>;
}

/**
 * The peer (bench/peer.ts) in a process of its own, compiled by esbuild and run by plain `node`
 * as the services run compiled, on the database at `url` with a pool of `poolMax`.
 */
export async function startPeer({
  url,
  poolMax,
}: {
  url: string;
  poolMax: number;
}): Promise<PeerProcess> {
  // Beside the repository's node_modules, where its imports of fastify and pg are found.
  await fs.mkdir(path.join(ROOT, 'dist'), { recursive: true });
  const folder = await fs.mkdtemp(path.join(ROOT, 'dist', 'bench-peer-'));
  try {
    const entry = path.join(folder, 'peer.mjs');
    await build({
      entryPoints: [path.join(ROOT, 'bench', 'peer.ts')],
      outfile: entry,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
    });
    return await run(entry, { url, poolMax });
  } finally {
    // Once the peer listens, it has loaded all of its code.
    await fs.rm(folder, { recursive: true, force: true });
  }
}

/** Runs the compiled peer at `entry` until it says its port. */
async function run(
  entry: string,
  { url, poolMax }: { url: string; poolMax: number },
): Promise<PeerProcess> {
  const token = randomBytes(24).toString('base64url');
  const child = spawn(process.execPath, [entry], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, DB_POOL_MAX: String(poolMax), BENCH_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The peer goes with the benchmark, however the benchmark ends.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk) => {
        output += chunk;
        if (output.includes('\n')) resolve(Number(output.trim()));
      });
      child.once('exit', (code) => reject(new Error(`the peer exited during start-up (${code})`)));
    });
    return {
      url: `http://127.0.0.1:${port}`,
      pid: child.pid!,
      cookie: `token=${token}`,
      async stop() {
        process.off('exit', kill);
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (error) {
    kill();
    throw error;
  }
}
