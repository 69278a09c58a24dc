import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  /** URL of a database of its own, empty when created. */
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database on the suite's PostgreSQL, for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

async function withAdmin(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
