import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';

// Ids are bigint (int8), which pg hands over as text: every id stays within 2^53 - 1, a number.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

/** A service's pg pool, in which unqualified table names resolve in the service's schema. */
export type Database = ReturnType<typeof createDatabase>;

/**
 * Every wait is bounded, so that a lost database answers an error, never a hang. `maxBytes` is the
 * storage cap the schema's triggers enforce (NOTES_MAX_BYTES).
 */
export function createDatabase(
  options: Pick<DatabaseConfig, 'poolMax' | 'timeoutMs'> &
    Record<'url' | 'schema', string> & { maxBytes?: number; logger: Logger },
) {
  const { url, schema, timeoutMs, maxBytes, logger } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax,
    connectionTimeoutMillis: timeoutMs,
    // The server gives up first, so that a statement the client gave up on is cancelled there too.
    statement_timeout: Math.max(1, timeoutMs - 250),
    query_timeout: timeoutMs,
    application_name: schema,
    options:
      `-c search_path=${schema}` +
      (maxBytes === undefined ? '' : ` -c storage.max_bytes=${maxBytes}`),
  });
  // Without a listener, an idle connection's failure (a restarted server) would end the process.
  pool.on('error', (error) => logger.warn({ err: error.message }, 'idle database connection lost'));
  const traced = logger.isLevelEnabled('trace');
  const timers = new Set<NodeJS.Timeout>();
  /** Runs `task` about every `intervalMs` (±20%: instances spread their runs) until closed. */
  const every = (intervalMs: number, task: () => Promise<unknown>) => {
    const timer = setTimeout(
      async () => {
        await task().catch((error: Error) =>
          logger.warn({ err: error.message }, 'upkeep failed; tried again later'),
        );
        if (timers.delete(timer)) every(intervalMs, task);
      },
      intervalMs * (0.8 + 0.4 * Math.random()),
    ).unref();
    timers.add(timer);
  };
  const query = <Row extends pg.QueryResultRow = pg.QueryResultRow>(
    statement: string | pg.QueryConfig,
    values?: unknown[],
  ) => {
    if (traced) logger.trace({ sql: statement, values }, 'statement');
    return pool.query<Row>(statement, values);
  };
  return {
    query,
    /** Committed when `work` resolves, rolled back when it throws. */
    async transaction<T>(work: (inTransaction: typeof query) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work((text, values) => client.query(text, values));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that cannot even roll back is not given out again.
        broken = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        );
        throw error;
      } finally {
        client.release(broken);
      }
    },
    every,
    connections: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
    close() {
      timers.forEach(clearTimeout);
      timers.clear();
      return pool.end();
    },
  };
}

/** Failures that pass by themselves: nothing listens yet, a slow network, a server starting. */
const isTransient = ({ code, message }: { code?: string; message: string }) =>
  ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', '57P03'].includes(code ?? '') ||
  /timeout|Connection terminated unexpectedly/i.test(message);

/**
 * Waits until the database answers, with backoff for up to DB_STARTUP_RETRY_MS, so that the
 * services can start before it; what waiting cannot mend ends the start at once, for a person.
 */
export async function waitForDatabase(
  url: string,
  source: string,
  { startupRetryMs, timeoutMs }: DatabaseConfig,
  logger: Logger,
): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const where =
    `the database ${pathname.slice(1) || '(default)'} ` +
    `at ${hostname}:${port || 5432} (${source})`;
  const deadline = Date.now() + startupRetryMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      const reason = (error as Error).message;
      if (!isTransient(error as Error)) throw new StartupError(`Cannot use ${where}: ${reason}`);
      if (Date.now() + delay > deadline)
        throw new StartupError(
          `Cannot reach ${where} within ${startupRetryMs} ms (DB_STARTUP_RETRY_MS): ${reason}`,
        );
      logger.warn({ err: reason, retryInMs: delay }, 'database not reachable yet');
      await new Promise((resolve) => setTimeout(resolve, delay));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
