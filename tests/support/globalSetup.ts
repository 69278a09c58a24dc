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
  // Vitest would report a failed setup after "No test files found": the reason goes first.
  const { url, source, stop } = await throwawayPostgres().catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
  console.log(
    `[tests] PostgreSQL ${await postgresVersion(url)} from ${source}, Node ${process.version}`,
  );
  project.provide('adminDatabaseUrl', url);
  // A run stopped by Ctrl-C or SIGTERM ends what it started: the test files' workers, the servers
  // they started, their databases and this one. (A container is testcontainers' Ryuk's to end.)
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      endDescendants();
      process.exitCode = code;
    });
  }
  return stop;
}
