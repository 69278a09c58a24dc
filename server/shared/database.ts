import knex, { type Knex } from 'knex';
import type { QueryResult, QueryResultRow } from 'pg';
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
 * Sends one fixed, parameterized statement on a connection of the Knex pool. The request paths
 * use this rather than Knex's query builder: their statements never change, and Knex's per-query
 * runner (compiling, binding, events, promise chains) costs more CPU than the pg client itself
 * (bench/FINDINGS.md). Same pool, same timeouts, and Knex's `query` event still fires, so what
 * listens to it (a query log, the benchmark's recorder) sees these statements too.
 */
export async function query<Row extends QueryResultRow>(db: Database, text: string, values: unknown[] = []): Promise<QueryResult<Row>> {
  const connection = await db.client.acquireConnection();
  try {
    db.client.emit('query', { sql: text, bindings: values, __knexUid: connection.__knexUid });
    return await connection.query(text, values);
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/**
 * Every row of a statement that reads rows newest first, `batchSize` at a time: `text` takes
 * `$1`, the id the rows must be below, and `$2`, the batch size, and orders by id descending.
 * Each batch is a statement of its own (keyset paging), so a long list holds no connection while
 * its reader is slow; a row changed while the list is read appears at most once.
 */
export async function* batchesById<Row extends QueryResultRow & { id: number }>(
  db: Database,
  text: string,
  batchSize: number,
): AsyncGenerator<Row[]> {
  // Above any id: `$1` is compared as bigint, so this is valid for integer and bigint columns.
  let below = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await query<Row>(db, text, [below, batchSize]);
    if (rows.length > 0) yield rows;
    if (rows.length < batchSize) return;
    below = rows[rows.length - 1]!.id;
  }
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
