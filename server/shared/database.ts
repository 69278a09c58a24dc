import pg from 'pg';
import type { DatabaseConfig } from './config.js';
import type { Logger } from './logger.js';

/**
 * The request paths' way to PostgreSQL: a `pg` pool per service whose unqualified table names
 * resolve in the service's schema, so services can share one database without touching each
 * other's tables. Knex keeps the schema (migrations, knexfile.ts) but is not on the request
 * path: its statements never change there, and Knex's query runner (compiling, binding, events,
 * promise chains) cost about as much CPU per request as the rest of the request, measured with
 * `npm run bench` against the same statements on a bare `pg` pool.
 */
export interface Database {
  /** Sends one parameterized statement on a pooled connection. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>>;
  /** Ends every connection; pending statements finish first. */
  close(): Promise<void>;
}

export interface DatabaseOptions extends Pick<DatabaseConfig, 'poolMax' | 'timeoutMs'> {
  url: string;
  schema: string;
  logger: Logger;
}

/**
 * Every wait is bounded by `timeoutMs`: for a pooled connection, and for each statement, both on
 * the server (`statement_timeout`, so a statement given up on does not run on) and in the client
 * (`query_timeout`, for a server that stops answering at all). A lost database answers an
 * error, never a hang. With LOG_LEVEL=trace every statement is logged with its values.
 */
export function createDatabase({ url, schema, poolMax, timeoutMs, logger }: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs,
    application_name: schema,
    options: `-c search_path=${schema}`,
  });
  // A pooled connection that fails while idle (the server restarted, say) is dropped by the
  // pool; without a listener the failure would end the process.
  pool.on('error', (error) => logger.warn({ err: error.message }, 'idle database connection lost'));
  const traced = logger.isLevelEnabled('trace');

  return {
    query(text, values = []) {
      if (traced) logger.trace({ sql: text, values }, 'statement');
      return pool.query(text, values);
    },
    close: () => pool.end(),
  };
}

/**
 * Every row of a statement that reads rows newest first, `batchSize` at a time: `text` takes
 * `$1`, the id the rows must be below, and `$2`, the batch size, and orders by id descending.
 * Each batch is a statement of its own (keyset paging), so a long list holds no connection while
 * its reader is slow; a row changed while the list is read appears at most once.
 */
export async function* batchesById<Row extends pg.QueryResultRow & { id: number }>(
  db: Database,
  text: string,
  batchSize: number,
): AsyncGenerator<Row[]> {
  // Above any id: `$1` is compared as bigint, so this is valid for integer and bigint columns.
  let below = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const { rows } = await db.query<Row>(text, [below, batchSize]);
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
      await db.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() + delay > deadline) throw error;
      logger.warn({ err: (error as Error).message, retryInMs: delay }, 'database not reachable yet');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
