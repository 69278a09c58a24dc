import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { postgresVersion, throwawayPostgres } from '../../harness/postgres.js';
import { endDescendants } from '../../harness/procfs.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL with the right to create databases; each test file makes its own. */
    adminDatabaseUrl: string;
  }
}

/** The PostgreSQL the suite runs on (see throwawayPostgres), shared by every test file. */
export default async function setup(project: TestProject) {
  // Every temporary folder of the run (databases, data folders, copies, browser profiles) is made
  // in one of its own, which goes with the run however it ends. The embedded PostgreSQL's user
  // passes through it to its data folder.
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'services-tests-'));
  await fs.chmod(folder, 0o755);
  process.env.TMPDIR = folder;
  const removeFolder = () => rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  // Vitest would report a failed setup after "No test files found": the reason goes first.
  const { url, source, stop } = await throwawayPostgres().catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    removeFolder();
    process.exit(1);
  });
  console.log(
    `[tests] PostgreSQL ${await postgresVersion(url)} from ${source}, Node ${process.version}`,
  );
  project.provide('adminDatabaseUrl', url);
  // A run stopped by Ctrl-C or SIGTERM ends what it started: the test files' workers, the servers
  // they started, their databases and this one, then their folders. (A container is
  // testcontainers' Ryuk's to end.)
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      endDescendants();
      removeFolder();
      process.exitCode = code;
    });
  }
  return async () => {
    await stop();
    removeFolder();
  };
}
