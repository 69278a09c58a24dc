import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createScratchDatabase, withClient } from '../tests/support/scratchDatabase.js';

/**
 * Where the benchmark's PostgreSQL is. With DATABASE_URL set, every start gets a throwaway
 * database on that server (so a benchmark never touches real notes); otherwise the services run
 * their embedded PostgreSQL in a temporary DATA_DIR and the benchmark reads its address there.
 */
export interface BenchDatabase {
  /** The URL to hand to the services (undefined: embedded, in DATA_DIR). */
  serviceUrl?: string;
  /** A URL the benchmark itself connects with, known once the services run. */
  url(): Promise<string>;
  drop(): Promise<void>;
}

export async function benchDatabase(dataDir: string): Promise<BenchDatabase> {
  const external = process.env.DATABASE_URL;
  if (!external) return { url: () => embeddedUrl(dataDir), drop: async () => {} };

  const scratch = await createScratchDatabase(external, 'bench');
  return { serviceUrl: scratch.url, url: async () => scratch.url, drop: scratch.drop };
}

/** The embedded server's address: its password file and the port in `postmaster.pid` (4th line). */
async function embeddedUrl(dataDir: string): Promise<string> {
  const password = (await fs.readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const pidFile = await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8');
  const port = Number(pidFile.split('\n')[3]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${dataDir}/postgres/postmaster.pid`);
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/** A pool whose unqualified table names resolve in `schema`, as the service's own pool does. */
export function schemaPool(url: string, schema: string, max: number, onError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, options: `-c search_path=${schema}` });
  // An idle connection the server drops must not end the benchmark.
  pool.on('error', onError);
  return pool;
}

export async function postgresVersion(url: string): Promise<string> {
  return withClient(url, async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version);
}
