import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../server/shared/embeddedPostgres.js';
import { createLogger } from '../server/shared/logger.js';

export interface ScratchDatabase {
  /** URL of a database of its own, empty when created. */
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database named `<prefix>_<random>` on the server of `adminUrl`. */
export async function createScratchDatabase(adminUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => void (await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function postgresVersion(url: string): Promise<string> {
  return withClient(url, async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version);
}

export interface ThrowawayPostgres {
  /** A URL with the right to create databases. */
  url: string;
  /** Where it comes from, for the run's output. */
  source: string;
  stop(): Promise<void>;
}

/**
 * A PostgreSQL server to make scratch databases on: TEST_DATABASE_URL when set; else a
 * testcontainers PostgreSQL when a container runtime answers; else an embedded server in a
 * temporary folder, removed when stopped.
 */
export async function throwawayPostgres(): Promise<ThrowawayPostgres> {
  if (process.env.TEST_DATABASE_URL) {
    return { url: process.env.TEST_DATABASE_URL, source: 'TEST_DATABASE_URL', stop: async () => {} };
  }

  const { getContainerRuntimeClient } = await import('testcontainers');
  const runtime = await Promise.race([
    getContainerRuntimeClient().then(() => true, () => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
  ]);
  if (runtime) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:17-alpine').start();
    return { url: container.getConnectionUri(), source: 'testcontainers', stop: async () => void (await container.stop()) };
  }

  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'throwaway-pg-'));
  await fs.chmod(dataDir, 0o755);
  const server = await startEmbeddedPostgres({ dataDir, logger: createLogger('warn'), durable: false });
  return {
    url: server.url,
    source: 'embedded PostgreSQL',
    stop: async () => {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
