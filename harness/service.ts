import type { Edge } from '../server/config.js';
import { createDatabase, type Database } from '../server/db/pool.js';
import type { Logger } from '../server/logger.js';
import { listen, type ConnectionLimits } from '../server/http/listen.js';
import type { Service } from '../server/services.js';
import { contractChecker } from './contract.js';
import { send, type Reply, type Request } from './http.js';
import { captureLogs, type LogCapture } from './logs.js';
import { createMigratedDatabase } from './postgres.js';

type ContractDocument = Parameters<typeof contractChecker>[0];
/** A checker per document the services publish: compiling its schemas is what costs. */
const checkers = new Map<string, ReturnType<typeof contractChecker>>();

type DatabaseOf<Deps> = Deps extends { db: infer D } ? D : undefined;

export interface StartedService<Deps> {
  url: string;
  /** The service's pool on its database (for services that have one). */
  db: DatabaseOf<Deps>;
  /** What the service logged. */
  logs: LogCapture;
  /** Sends a request; the answer must be one the service's OpenAPI document describes. */
  request(method: string, path: string, options?: Omit<Request, 'method' | 'path'>): Promise<Reply>;
  /** Stops listening, closes the pool and drops the scratch database. */
  close(): Promise<void>;
}

export interface StartOptions<Deps> {
  /** What the service depends on besides its logger, pool and edge. */
  deps: Omit<Deps, 'logger' | 'db' | 'edge'>;
  /** Allowed hosts, trusted proxies, production mode: none, none, development unless given. */
  edge?: Edge;
  /** The server a scratch database is made on (services with a database). */
  postgresUrl?: string;
  /** A pool to use instead of a scratch database (one failing on purpose, say); no migrations. */
  db?: Database;
  /** Settings of the scratch database's pool (NOTES_MAX_BYTES's cap among them). */
  pool?: { poolMax?: number; timeoutMs?: number; maxBytes?: number };
  /** What clients may hold (connections, timeouts); Node's defaults otherwise. */
  limits?: ConnectionLimits;
  logLevel?: string;
}

/**
 * A service as the process runs it, on a free loopback port: its own scratch database with its
 * migrations applied, a logger whose lines are kept, and its published contract to check
 * answers against.
 */
export async function startService<Deps extends { logger: Logger; edge: Edge; config: unknown }>(
  descriptor: Service<Deps>,
  options: StartOptions<Deps>,
): Promise<StartedService<Deps>> {
  const logs = captureLogs(options.logLevel);
  const cleanups: (() => Promise<void>)[] = [];
  let db = options.db;
  if (!db && descriptor.usesDatabase(options.deps.config)) {
    if (!options.postgresUrl)
      throw new Error(`${descriptor.name} keeps its tables in PostgreSQL: give a postgresUrl`);
    const { database, name } = descriptor;
    const scratch = await createMigratedDatabase(options.postgresUrl, name, database);
    cleanups.push(scratch.drop);
    db = createDatabase({
      url: scratch.url,
      schema: database.schema,
      poolMax: 10,
      timeoutMs: 2_000,
      ...options.pool,
      logger: logs.logger,
    });
    cleanups.push(db.close);
  }
  // The one place the harness must trust its caller: `Deps` is `deps` plus the logger, pool and
  // edge made here.
  const edge = options.edge ?? { production: false };
  const app = descriptor.createApp({
    ...options.deps,
    logger: logs.logger,
    edge,
    ...(db && { db }),
  } as unknown as Deps);
  const server = await listen(app, { host: '127.0.0.1', port: 0 }, options.limits);
  cleanups.unshift(() => server.close(1_000));
  // Asked under a name the service answers, should it answer only some.
  const host = edge.allowedHosts?.[0];
  const document = await send(server.url, {
    method: 'GET',
    path: '/openapi.json',
    headers: host ? { host } : {},
  });
  if (!checkers.has(document.text))
    checkers.set(document.text, contractChecker(JSON.parse(document.text) as ContractDocument));
  const check = checkers.get(document.text)!;

  return {
    url: server.url,
    db: db as DatabaseOf<Deps>,
    logs,
    async request(method, path, requestOptions = {}) {
      const reply = await send(server.url, { ...requestOptions, method, path });
      check(method, path, reply);
      return reply;
    },
    async close() {
      for (const cleanup of cleanups) await cleanup();
    },
  };
}
