import type { TestProject } from 'vitest/node';
import { postgresVersion, throwawayPostgres } from '../../harness/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL with the right to create databases; each test file makes its own. */
    adminDatabaseUrl: string;
  }
}

/** The PostgreSQL the suite runs on (see throwawayPostgres), shared by every test file. */
export default async function setup(project: TestProject) {
  const { url, source, stop } = await throwawayPostgres();
  console.log(
    `[tests] PostgreSQL ${await postgresVersion(url)} from ${source}, Node ${process.version}`,
  );
  project.provide('adminDatabaseUrl', url);
  return stop;
}
