import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { DatabaseConfig } from './config.js';
import { insufficientStorage, StartupError } from './errors.js';
import type { Logger } from './logger.js';

/**
 * The request paths' way to PostgreSQL: a `pg` pool per service whose unqualified table names
 * resolve in the service's schema, so services can share one database without touching each
 * other's tables. Knex keeps the schema (migrations, knexfile.ts) but is not on the request
 * path: its statements never change there, and Knex's query runner (compiling, binding, events,
 * promise chains) cost about as much CPU per request as the rest of the request, measured with
 * `npm run bench` against the same statements on a bare `pg` pool.
 */
/**
 * A statement's text, or a prepared statement: a name that always stands for the same text (and
 * whose rows may come as arrays of their columns' text rather than as objects).
 */
export type Statement = string | PreparedStatement;
export interface PreparedStatement {
  name: string;
  text: string;
  rowMode?: 'array';
}

export interface Database {
  /**
   * Sends one parameterized statement on a pooled connection; a named one is parsed and planned
   * once per connection, then only executed (for the few statements nearly every request sends).
   */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    statement: Statement,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>>;
  /**
   * The columns of the first row of a statement, as the text PostgreSQL sent (JSON that
   * PostgreSQL rendered, say: see renderedNote), or undefined when it returned no row. No row
   * object is built and no value parsed: the text goes to the client as it came.
   */
  row(statement: Statement, values?: unknown[]): Promise<string[] | undefined>;
  /**
   * The moment the client stops waiting for a statement sent now (milliseconds since the epoch),
   * for a write to check with
   * `inTime($n)` (see writeFence.ts): a write that runs later than that fails, changing nothing,
   * so that an answer of 500 for a write means it was not applied, even by a database that was
   * frozen and runs the statement when it thaws.
   */
  deadline(): number;
  /**
   * The bytes that `COPY (select) TO STDOUT (options)` sends, as the connection received them,
   * with neither a string nor a row made of them (see batchesById); bounded in time like a
   * statement. COPY takes no parameters: `select` holds its values.
   */
  copyOut(select: string, options: string): Promise<Buffer[]>;
  /**
   * Runs `work` in a transaction on one connection: committed when it resolves, rolled back when
   * it throws. For the few places where several statements must hold together (a login with its
   * session caps); the request paths of the notes services use single statements.
   */
  transaction<T>(work: (query: Database['query']) => Promise<T>): Promise<T>;
  /**
   * Runs `task` about every `intervalMs` for as long as the pool is open (upkeep, such as deleting
   * expired rows). Each interval is drawn within ±20%, so that instances started together spread
   * their runs; the timer keeps no process alive, and a failure is logged, never thrown.
   */
  every(intervalMs: number, task: () => Promise<unknown>): void;
  /** The pool's connections now: open, idle among them, and the requests waiting for one. */
  connections(): PoolConnections;
  /** Ends every connection and every `every`; pending statements finish first. */
  close(): Promise<void>;
}

export interface PoolConnections {
  total: number;
  idle: number;
  waiting: number;
}

export interface DatabaseOptions extends Pick<DatabaseConfig, 'poolMax' | 'timeoutMs'> {
  url: string;
  schema: string;
  /** The storage cap the schema's triggers enforce (see storageCap.ts); none when undefined. */
  maxBytes?: number;
  logger: Logger;
}

/**
 * Every wait is bounded: for a pooled connection by `timeoutMs`, and each statement both on the
 * server (`statement_timeout`) and in the client (`query_timeout`, for a server that stops
 * answering at all). The server's bound is the shorter, so that a statement the client gives up
 * on is cancelled by the server too, as soon as it runs again (a frozen database that thaws):
 * an answer of 500 for a write means it was not applied, wherever PostgreSQL can still say so.
 * A lost database answers an error, never a hang. With LOG_LEVEL=trace every statement is
 * logged with its values.
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
    statement_timeout: Math.max(1, timeoutMs - SERVER_BOUND_MARGIN_MS),
    query_timeout: timeoutMs,
    application_name: schema,
    options: `-c search_path=${schema}${maxBytes === undefined ? '' : ` -c storage.max_bytes=${maxBytes}`}`,
  });
  // A pooled connection that fails while idle (the server restarted, say) is dropped by the
  // pool; without a listener the failure would end the process.
  pool.on('error', (error) => logger.warn({ err: error.message }, 'idle database connection lost'));
  const traced = logger.isLevelEnabled('trace');
  // Every query as an object of one shape, made without copying the statement's: the path every
  // request takes.
  const queryOf = (
    statement: Statement,
    values: unknown[],
    rowMode?: 'array',
  ): pg.QueryConfig & { rowMode?: 'array' } => {
    const named =
      typeof statement === 'string'
        ? { name: undefined, text: statement, rowMode: undefined }
        : statement;
    if (traced) logger.trace({ sql: named.text, values }, 'statement');
    return { name: named.name, text: named.text, values, rowMode: rowMode ?? named.rowMode };
  };
  const timers = new Set<NodeJS.Timeout>();

  return {
    query(statement, values = []) {
      return pool.query(queryOf(statement, values)).catch(refusedForSpace);
    },
    async row(statement, values = []) {
      try {
        return (await pool.query<string[]>(queryOf(statement, values, 'array'))).rows[0];
      } catch (error) {
        return refusedForSpace(error as { code?: string });
      }
    },
    deadline: () => Date.now() + timeoutMs,
    async copyOut(select, options) {
      const text = `COPY (${select}) TO STDOUT (${options})`;
      if (traced) logger.trace({ sql: text }, 'statement');
      const client = await pool.connect();
      // pg's query_timeout bounds a COPY as it bounds a statement: at `timeoutMs` the stream fails
      // with "Query read timeout". Its timer is not cleared when a COPY ends (pg-copy-streams never
      // tells pg that it has), so it fails the finished stream later: that failure is ignored.
      const copy = client.query(copyTo(text));
      let broken = true;
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of copy) chunks.push(chunk as Buffer);
        broken = false;
        return chunks;
      } finally {
        copy.on('error', () => undefined);
        // A connection left in the middle of a COPY is not given out again.
        client.release(broken);
      }
    },
    async transaction(work) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work((text, values = []) => {
          if (traced) logger.trace({ sql: text, values }, 'statement');
          return client.query(text, values);
        });
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

/** How much sooner the server gives up on a statement than the client does. */
const SERVER_BOUND_MARGIN_MS = 250;

/**
 * A write the storage cap refused (PostgreSQL's `disk_full`, see storageCap.ts) is the client's
 * 507.
 */
function refusedForSpace(error: { code?: string }): never {
  if (error.code === '53100') throw insufficientStorage();
  throw error;
}

/**
 * What one batch of a list may hold: this many rows, or about this many bytes of text, whichever
 * comes first.
 */
const BATCH_ROWS = 250;
const BATCH_BYTES = 1024 * 1024;

/**
 * The statement behind `batchesById`: the rows of `table` below the id `$1` and from the id `$4`
 * up, newest first, as many as fit in `$3` bytes of text (`bytes` measures a row, without reading
 * it out of TOAST) but never more than `$2` rows, and at least one; rendered by PostgreSQL as
 * their JSON objects (`columns` of each row, as renderedNote renders one) joined by commas, with
 * the batch's last id, its size, and how many rows were candidates, so that the caller knows
 * whether the range goes on. One pass: the windows measure the candidates, and only the rows that
 * fit are rendered (joining the candidates back to the table, with the candidates and the batch
 * each read twice, cost PostgreSQL 1.6 times the CPU for a list of 100 notes). The text comes
 * last, so that the COPY of a later batch (see batchesById) starts with the few figures.
 */
export function batchStatement(
  name: string,
  table: string,
  columns: string,
  bytes: string,
): PreparedStatement {
  const text = `SELECT min(id), count(*), max(candidates), string_agg(json, ',' ORDER BY id DESC)
  FROM (
    SELECT id, candidates, (SELECT row_to_json(rendered) FROM (SELECT ${columns}) AS rendered)::text AS json
    FROM (
      SELECT *, sum(${bytes}) OVER newest_first AS running, row_number() OVER newest_first AS place, count(*) OVER () AS candidates
      FROM (SELECT * FROM ${table} WHERE id < $1::bigint AND id >= $4::bigint ORDER BY id DESC LIMIT $2) AS newest
      WINDOW newest_first AS (ORDER BY id DESC)
    ) AS measured
    WHERE running <= $3 OR place = 1
  ) AS batch`;
  return { name, text, rowMode: 'array' };
}

/**
 * The rows of `from` (a table or a statement's rows, and what follows: `notes WHERE id = $1`),
 * each as two texts: the JSON object of `columns` of it, in column order, as PostgreSQL's
 * row_to_json writes it (compact, as JSON.stringify writes it), and its `version` as a strong
 * entity tag: the answer's body and ETag, rendered where the data is.
 */
export const renderedNote = (columns: string, from: string) =>
  `SELECT (SELECT row_to_json(rendered) FROM (SELECT ${columns}) AS rendered)::text, '"' || version || '"' FROM ${from}`;

/** Ids of a range of rows: below `below`, and from `from` up (every id, unless said). */
export interface IdRange {
  below?: number;
  from?: number;
}

/**
 * Every row of `statement` (from `batchStatement`) in the range, a batch at a time, as the JSON
 * text of its objects joined by commas. Each batch is a statement of its own (keyset paging)
 * bounded in rows and in bytes, so a long list of large rows holds one batch's text and no
 * database connection while its reader is slow, and each statement stays short under the pool's
 * timeouts; a row changed while the list is read appears at most once.
 *
 * A batch comes as the prepared statement's string, unless the one before it was longer than
 * LARGE_TEXT: then as the bytes PostgreSQL sends (`COPY`), so that lists of large notes do not
 * pile up strings in V8's heap.
 */
export async function* batchesById(
  db: Database,
  statement: PreparedStatement,
  { below: above = 2 ** 53, from = 0 }: IdRange = {},
): AsyncGenerator<string | Buffer[]> {
  for (let below = above, length = 0; ;) {
    // `$1` and `$4` are compared as bigint, so any id of an integer or bigint column fits.
    const values = [below, BATCH_ROWS, BATCH_BYTES, from];
    const batch =
      length > LARGE_TEXT
        ? await copiedBatch(db, statement, values)
        : await preparedBatch(db, statement, values);
    if (!batch) return;
    yield batch.json;
    // The range ends with a batch that left no candidate out and could have taken more.
    if (batch.count === batch.candidates && batch.count < BATCH_ROWS) return;
    below = batch.last;
    length = batch.length;
  }
}

/**
 * The length of text past which V8 keeps a string in its large-object space (128 KiB), which
 * only a full collection frees: a batch this long says that its notes are large, and V8 would
 * let such strings pile up by hundreds of megabytes between full collections. Bytes from the
 * socket are freed by a young collection. Shorter batches stay strings: a COPY is planned at
 * every batch, where the prepared statement is planned once per connection.
 */
const LARGE_TEXT = 128 * 1024;

interface Batch {
  json: string | Buffer[];
  /** Its length, in characters or bytes. */
  length: number;
  /** The last (smallest) id in it. */
  last: number;
  count: number;
  candidates: number;
}

async function preparedBatch(
  db: Database,
  statement: PreparedStatement,
  values: number[],
): Promise<Batch | undefined> {
  const [last, count, candidates, json] = (await db.row(statement, values)) as [
    string,
    string,
    string,
    string | null,
  ];
  if (json === null) return undefined;
  return {
    json,
    length: json.length,
    last: Number(last),
    count: Number(count),
    candidates: Number(candidates),
  };
}

async function copiedBatch(
  db: Database,
  statement: PreparedStatement,
  values: number[],
): Promise<Batch | undefined> {
  const json = await db.copyOut(withValues(statement.text, values), COPY_CSV);
  const figures = leadingFields(json, 3);
  if (!figures || figures[1] === '0') return undefined;
  const [last, count, candidates] = figures.map(Number) as [number, number, number];
  return {
    json,
    length: json.reduce((sum, chunk) => sum + chunk.length, 0),
    last,
    count,
    candidates,
  };
}

/**
 * COPY's CSV with separators that JSON text never holds (it escapes every control character), so
 * nothing in a row is quoted or escaped: a batch's row comes as its fields' bytes, each ended by
 * the delimiter, the last by a newline.
 */
const FIELD_END = 0x02;
const COPY_CSV = "FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01'";

/**
 * `text` with its parameters `$1`… written in: COPY takes none, and these are whole numbers the
 * service chose.
 */
function withValues(text: string, values: number[]): string {
  return text.replace(/\$(\d+)/g, (_, place: string) => {
    const value = values[Number(place) - 1]!;
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a whole number: ${value}`);
    return String(value);
  });
}

/**
 * The first `count` fields of a COPY row in `chunks`, taken out of them in place (the chunks then
 * hold the rest of the row without its newline); undefined when the row is empty.
 */
function leadingFields(chunks: Buffer[], count: number): string[] | undefined {
  const fields: string[] = [];
  let field = '';
  while (fields.length < count && chunks.length > 0) {
    const chunk = chunks[0]!;
    const end = chunk.indexOf(FIELD_END);
    if (end === -1) {
      field += chunk.toString('latin1');
      chunks.shift();
      continue;
    }
    fields.push(field + chunk.toString('latin1', 0, end));
    field = '';
    chunks[0] = chunk.subarray(end + 1);
  }
  if (fields.length < count) return undefined;
  const lastChunk = chunks.at(-1);
  if (lastChunk) chunks[chunks.length - 1] = lastChunk.subarray(0, lastChunk.length - 1);
  return fields;
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
