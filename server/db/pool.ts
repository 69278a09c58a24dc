import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { HttpError, StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';

// Ids are bigint (int8), which pg hands over as text: every id stays within 2^53 - 1, a number.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

/**
 * A service's way to PostgreSQL: a `pg` pool whose unqualified table names resolve in the
 * service's schema, so services can share one database without touching each other's tables.
 * Knex keeps the schema (migrations); the request path sends its few fixed statements through
 * `pg` itself, each prepared once per connection when given a name.
 */
export interface Database {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    statement: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>>;
  /**
   * Runs `work` in a transaction on one connection: committed when it resolves, rolled back when
   * it throws.
   */
  transaction<T>(work: (query: Database['query']) => Promise<T>): Promise<T>;
  /**
   * Runs `task` about every `intervalMs` while the pool is open (upkeep, such as deleting expired
   * rows), each interval drawn within ±20% so that instances started together spread their runs;
   * a failure is logged, never thrown.
   */
  every(intervalMs: number, task: () => Promise<unknown>): void;
  /** The pool's connections now: open, idle among them, and the requests waiting for one. */
  connections(): { total: number; idle: number; waiting: number };
  /** Ends every connection and every `every`; pending statements finish first. */
  close(): Promise<void>;
}

export interface DatabaseOptions extends Pick<DatabaseConfig, 'poolMax' | 'timeoutMs'> {
  url: string;
  schema: string;
  /** The storage cap the schema's triggers enforce (NOTES_MAX_BYTES); none when undefined. */
  maxBytes?: number;
  logger: Logger;
}

/** A write the storage cap refused: PostgreSQL's `disk_full`, raised by the counting trigger. */
const DISK_FULL = '53100';
export const STORAGE_FULL = 'Storage limit reached: delete notes to make room';

/**
 * Every wait is bounded: for a pooled connection by `timeoutMs`, and each statement both on the
 * server (`statement_timeout`) and in the client (`query_timeout`, for a server that stops
 * answering at all). A lost database answers an error, never a hang. With LOG_LEVEL=trace every
 * statement is logged with its values.
 */
export function createDatabase({
  url,
  schema,
  poolMax,
  timeoutMs,
  maxBytes,
  logger,
}: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: timeoutMs,
    // The server gives up first, so that a statement the client gave up on is cancelled there too.
    statement_timeout: Math.max(1, timeoutMs - 250),
    query_timeout: timeoutMs,
    application_name: schema,
    options: `-c search_path=${schema}${maxBytes === undefined ? '' : ` -c storage.max_bytes=${maxBytes}`}`,
  });
  // A pooled connection that fails while idle (the server restarted, say) is dropped by the pool;
  // without a listener the failure would end the process.
  pool.on('error', (error) => logger.warn({ err: error.message }, 'idle database connection lost'));
  const traced = logger.isLevelEnabled('trace');
  const timers = new Set<NodeJS.Timeout>();
  const query: Database['query'] = (statement, values) => {
    if (traced) logger.trace({ sql: statement, values }, 'statement');
    return pool.query(statement, values).catch((error: { code?: string }) => {
      if (error.code === DISK_FULL) throw new HttpError(507, STORAGE_FULL);
      throw error;
    });
  };

  return {
    query,
    async transaction(work) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work((text, values) => client.query(text, values));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that cannot even roll back is not given out again.
        broken = !(await client.query('ROLLBACK').then(
          () => true,
          () => false,
        ));
        throw error;
      } finally {
        client.release(broken);
      }
    },
    every(intervalMs, task) {
      const schedule = () => {
        const timer = setTimeout(
          async () => {
            await task().catch((error: unknown) =>
              logger.warn({ err: (error as Error).message }, 'upkeep failed; tried again later'),
            );
            if (timers.delete(timer)) schedule();
          },
          intervalMs * (0.8 + 0.4 * Math.random()),
        );
        timer.unref();
        timers.add(timer);
      };
      schedule();
    },
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

/**
 * Connection failures that pass by themselves: nothing listens yet, the network is slow, the server
 * is starting.
 */
function isTransient(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', '57P03'].includes(code ?? '') ||
    /timeout|Connection terminated unexpectedly/i.test(message ?? '')
  );
}

/**
 * Waits until the database at `url` answers, retrying refused and timed-out connections with
 * backoff (250 ms doubling to 5 s) for up to `retryMs`, one log line each, so that the services
 * can start before their database. A failure that waiting cannot mend (no such database, a wrong
 * password, a host that does not exist) ends the start at once, worded for a person.
 */
export async function waitForDatabase(
  url: string,
  {
    retryMs,
    timeoutMs,
    logger,
    source,
  }: { retryMs: number; timeoutMs: number; logger: Logger; source: string },
): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const where = `the database ${pathname.slice(1) || '(default)'} at ${hostname}:${port || 5432} (${source})`;
  const deadline = Date.now() + retryMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      const reason = (error as Error).message;
      if (!isTransient(error)) throw new StartupError(`Cannot use ${where}: ${reason}`);
      if (Date.now() + delay > deadline)
        throw new StartupError(
          `Cannot reach ${where} within ${retryMs} ms (DB_STARTUP_RETRY_MS): ${reason}`,
        );
      logger.warn({ err: reason, retryInMs: delay }, 'database not reachable yet');
      await new Promise((resolve) => setTimeout(resolve, delay));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
