import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../server/shared/embeddedPostgres.js';
import { createLogger } from '../../server/shared/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL with the right to create databases; each test file makes its own. */
    adminDatabaseUrl: string;
  }
}

/**
 * Picks the PostgreSQL the suite runs on: TEST_DATABASE_URL when set; else a testcontainers
 * PostgreSQL when a container runtime answers; else an embedded server in a temporary folder.
 */
export default async function setup(project: TestProject) {
  const { url, source, stop } = await testDatabase();
  console.log(`[tests] PostgreSQL from ${source}`);
  project.provide('adminDatabaseUrl', url);
  return stop;
}

async function testDatabase(): Promise<{ url: string; source: string; stop: () => Promise<void> }> {
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
    return {
      url: container.getConnectionUri(),
      source: 'testcontainers',
      stop: async () => void (await container.stop()),
    };
  }

  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'tests-pg-'));
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
