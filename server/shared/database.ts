import knex, { type Knex } from 'knex';
import type { DatabaseConfig } from './config.js';
import type { Logger } from './logger.js';

export type Database = Knex;

/**
 * A Knex instance with its own pool whose unqualified table names resolve in `schema`, so the
 * two notes services can share one database without touching each other's tables. Every wait
 * is bounded by `timeoutMs`: a lost database answers an error, never a hang.
 */
export function createDatabase(url: string, schema: string, config: DatabaseConfig, logger?: Logger): Database {
  return knex({
    // Knex reports pool trouble (e.g. "Acquire connection error") itself: into the log, not the console.
    ...(logger && {
      log: {
        warn: (message: unknown) => logger.warn({ knex: message }),
        error: (message: unknown) => logger.error({ knex: message }),
        deprecate: (message: unknown) => logger.warn({ knex: message }),
        debug: (message: unknown) => logger.debug({ knex: message }),
      },
    }),
    client: 'pg',
    connection: {
      connectionString: url,
      connectionTimeoutMillis: config.timeoutMs,
      statement_timeout: config.timeoutMs,
      query_timeout: config.timeoutMs,
      application_name: schema,
    },
    searchPath: [schema],
    pool: { min: 0, max: config.poolMax },
    acquireConnectionTimeout: config.timeoutMs,
  });
}

/**
 * Waits until the database answers, retrying with backoff (250 ms doubling to 5 s) for up to
 * `retryMs`, logging each refusal, so that a service started before its database comes up
 * instead of exiting on the first refusal.
 */
export async function waitForDatabase(db: Database, retryMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + retryMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      await db.raw('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() + delay > deadline) throw error;
      logger.warn({ err: (error as Error).message, retryInMs: delay }, 'database not reachable yet');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
