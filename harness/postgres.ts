import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../server/db/embeddedPostgres.js';
import { runMigrations } from '../server/db/migrations.js';
import { createLogger } from '../server/logger.js';
import { postgresProcessesFor, signal } from './procfs.js';

export interface ScratchDatabase {
  /** URL of a database of its own, empty when created. */
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database named `<prefix>_<random>` on the server of `adminUrl`: empty, or a copy of
 * `template`.
 */
export async function createScratchDatabase(
  adminUrl: string,
  prefix: string,
  template?: string,
): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  // The template's files copied as they are: for databases this small, about a fifth of the CPU
  // of the default strategy (WAL_LOG), which writes each block of the copy through the WAL.
  const copy = `${template ? ` TEMPLATE ${template}` : ''} STRATEGY FILE_COPY`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}${copy}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () =>
      void (await withClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      )),
  };
}

/** Migrated templates made by this process, by server, schema and migrations. */
const templates = new Map<string, Promise<string>>();

/**
 * A new database with `schema` at its latest migration: a file copy of a template migrated once
 * per server (PostgreSQL's CREATE DATABASE … TEMPLATE), much quicker than migrating each one.
 * Test processes sharing the server take turns on an advisory lock to make the template.
 */
export async function createMigratedDatabase(
  adminUrl: string,
  prefix: string,
  { schema, migrations }: { schema: string; migrations: string },
): Promise<ScratchDatabase> {
  const files = (await fs.readdir(migrations)).sort();
  const contents = await Promise.all(files.map((file) => fs.readFile(path.join(migrations, file))));
  const hash = createHash('sha256').update(files.join('/')).update(Buffer.concat(contents));
  const template = `template_${schema}_${hash.digest('hex').slice(0, 12)}`;
  const key = `${adminUrl} ${template}`;
  if (!templates.has(key))
    templates.set(
      key,
      withClient(adminUrl, async (client) => {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
        const exists = 'SELECT 1 FROM pg_database WHERE datname = $1';
        const found = await client.query(exists, [template]);
        if (found.rowCount === 0) {
          const built = await createScratchDatabase(adminUrl, `building_${schema}`);
          const logger = createLogger('silent');
          await runMigrations({ url: built.url, schema, directory: migrations, logger });
          const name = new URL(built.url).pathname.slice(1);
          await client.query(`ALTER DATABASE ${name} RENAME TO ${template}`);
        }
        return template;
      }),
    );
  return createScratchDatabase(adminUrl, prefix, await templates.get(key)!);
}

export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function postgresVersion(url: string): Promise<string> {
  const { rows } = await withClient(url, (client) => client.query('SHOW server_version'));
  return rows[0].server_version;
}

export interface ThrowawayPostgres {
  /** A URL with the right to create databases. */
  url: string;
  /** Where it comes from, for the run's output. */
  source: string;
  stop(): Promise<void>;
}

const SOURCES = ['testcontainers', 'embedded', 'url'] as const;
type Source = (typeof SOURCES)[number];

/**
 * A PostgreSQL server to make scratch databases on. `TEST_DB` forces where it comes from
 * (`url`: TEST_DATABASE_URL; `testcontainers`: a container of TEST_POSTGRES_IMAGE, default
 * `postgres:17-alpine`; `embedded`: an embedded server in a temporary folder), and a forced
 * source that cannot start fails the run with a clear message. Unset, the first that is there:
 * TEST_DATABASE_URL, a container runtime that answers, the embedded server.
 */
export async function throwawayPostgres(): Promise<ThrowawayPostgres> {
  const forced = process.env.TEST_DB || undefined;
  if (forced !== undefined && !SOURCES.includes(forced as Source)) {
    throw new Error(`TEST_DB=${forced} is not one of ${SOURCES.join(', ')}`);
  }
  const source =
    (forced as Source | undefined) ??
    (process.env.TEST_DATABASE_URL
      ? 'url'
      : (await containerRuntimeAnswers())
        ? 'testcontainers'
        : 'embedded');
  try {
    return await start[source]();
  } catch (error) {
    throw new Error(
      `The tests' PostgreSQL from ${source} could not start` +
        (forced ? ' (TEST_DB forces it: no other source is tried)' : '') +
        `: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

const start: Record<Source, () => Promise<ThrowawayPostgres>> = {
  async url() {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set');
    return { url, source: 'TEST_DATABASE_URL', stop: async () => {} };
  },
  async testcontainers() {
    const image = process.env.TEST_POSTGRES_IMAGE || 'postgres:17-alpine';
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer(image).start();
    return {
      url: container.getConnectionUri(),
      source: `testcontainers (${image})`,
      stop: async () => void (await container.stop()),
    };
  },
  async embedded() {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'throwaway-pg-'));
    await fs.chmod(dataDir, 0o755);
    const server = await startEmbeddedPostgres({
      dataDir,
      logger: createLogger('warn', 'json'),
      durable: false,
    });
    await cheapenLogins(server.url);
    return {
      url: server.url,
      source: 'embedded PostgreSQL',
      stop: async () => {
        await server.stop();
        await fs.rm(dataDir, { recursive: true, force: true });
      },
    };
  },
};

/**
 * A run opens some 700 connections, and each SCRAM login makes the client hash the password as
 * many times as the server's verifier says (PostgreSQL's default: 4096 HMACs, about 4 ms of CPU).
 * The throwaway server's password is hashed again with one iteration: still SCRAM, as the
 * services log in anywhere, for a fraction of the cost.
 */
async function cheapenLogins(url: string): Promise<void> {
  const { username, password } = new URL(url);
  await withClient(url, async (client) => {
    await client.query('SET scram_iterations = 1');
    await client.query(
      `ALTER ROLE ${client.escapeIdentifier(decodeURIComponent(username))} ` +
        `PASSWORD ${client.escapeLiteral(decodeURIComponent(password))}`,
    );
  });
}

async function containerRuntimeAnswers(): Promise<boolean> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  return Promise.race([
    getContainerRuntimeClient().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
  ]);
}

/** A data folder the embedded PostgreSQL's user can reach; the caller removes it. */
export async function temporaryDataDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'services-data-'));
  await fs.chmod(dir, 0o755);
  return dir;
}

/** Removes a data folder, killing any PostgreSQL server still running on it. */
export async function removeDataDir(dir: string): Promise<void> {
  for (const pid of await postgresProcessesFor(dir)) signal(pid, 'SIGKILL');
  await fs.rm(dir, { recursive: true, force: true });
}
