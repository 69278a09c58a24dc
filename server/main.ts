import cluster from 'node:cluster';
import { auth } from './auth/index.js';
import { builtSpa, prepareSpa, type Spa } from './auth/spa.js';
import { notes8000 } from './notes8000/index.js';
import { notes8080 } from './notes8080/index.js';
import { listenVariables, loadConfig, type ServiceName } from './shared/config.js';
import { createDatabase, waitForDatabase, type Database } from './shared/database.js';
import { startEmbeddedPostgres } from './shared/embeddedPostgres.js';
import { exitOnStartupError, StartupError } from './shared/errors.js';
import { fileLimit, RESERVED_DESCRIPTORS } from './shared/fileDescriptors.js';
import { lockDataDir } from './shared/instanceLock.js';
import { Lifecycle } from './shared/lifecycle.js';
import { createLogger } from './shared/logger.js';
import { runMigrations } from './shared/migrations.js';
import { listenAll } from './shared/serve.js';
import { needsDatabase } from './shared/service.js';
import { reportListening, startWorkers, type Listening } from './shared/workers.js';

/**
 * The process: its configuration, the database (embedded unless DATABASE_URL is set), the
 * migrations and pool of each service that keeps tables, the login service's pages, then every
 * address bound before any service is announced. With WORKERS above 1, this process (the
 * primary) prepares the database and the pages, and cluster workers, each running this same
 * program, serve. SIGINT, SIGTERM and SIGHUP stop everything in reverse order.
 */
const config = exitOnStartupError(() => loadConfig());
const logger = createLogger(config.logLevel, config.logFormat).child(cluster.isWorker ? { worker: cluster.worker!.id } : {});
const lifecycle = new Lifecycle(logger, config.connections.drainMs);
const stopping = () => lifecycle.stopping;
/** Whether each service keeps tables with these settings (the login service only with SESSION_STORE=postgres). */
const keepsTables: Record<ServiceName, boolean> = {
  notes8080: needsDatabase(notes8080, config.notes),
  notes8000: needsDatabase(notes8000, config.notes),
  auth: needsDatabase(auth, config.auth),
};
const descriptors = { notes8080, notes8000, auth };
const withDatabase = config.services.filter((name) => keepsTables[name]).map((name) => descriptors[name]);

/** The database's URL: DATABASE_URL, or the embedded server on DATA_DIR, which this process alone may run. */
async function openDatabaseServer(): Promise<string> {
  const { url, dataDir } = config.database;
  if (url) return url;
  const otherPorts = config.services.map((name) => listenVariables(name).port).join(', ');
  const lock = await lockDataDir(dataDir, otherPorts);
  lifecycle.defer(lock.release);
  const server = await startEmbeddedPostgres({ dataDir, logger });
  lifecycle.defer(server.stop);
  return server.url;
}

/** The database server, reachable, with every schema brought up to date; undefined when no service keeps tables. */
async function prepareDatabase(): Promise<string | undefined> {
  if (withDatabase.length === 0) return undefined;
  const url = await openDatabaseServer();
  const source = config.database.url ? 'DATABASE_URL' : 'the embedded PostgreSQL';
  await waitForDatabase(url, { retryMs: config.database.startupRetryMs, timeoutMs: config.database.timeoutMs, logger, source });
  for (const { database } of withDatabase) await runMigrations({ url, schema: database!.schema, directory: database!.migrations, logger });
  return url;
}

/** Connections each service may hold: together, they stay under the open-files limit. */
function connectionBudget(): number {
  const count = config.services.length;
  const limit = fileLimit() ?? 10_000 * count + RESERVED_DESCRIPTORS;
  const fits = Math.floor((limit - RESERVED_DESCRIPTORS) / count);
  const { max } = config.connections;
  if (max !== undefined && max > fits) {
    throw new StartupError(
      `MAX_CONNECTIONS=${max} is too many: ${count} services × ${max} connections and ${RESERVED_DESCRIPTORS} other files do not fit in the open-files limit (${limit}); set it to at most ${fits}`,
    );
  }
  return max ?? fits;
}

/** Makes each service's app on its own pool and binds them all; resolves with where each listens. */
async function serve(url: string | undefined, spa: Spa | undefined): Promise<Listening> {
  const { idleTimeoutMs, headersTimeoutMs } = config.connections;
  const limits = { maxConnections: connectionBudget(), idleTimeoutMs, headersTimeoutMs };
  const pools = new Map<string, Database>();
  for (const { name, database } of withDatabase) {
    const db = createDatabase({ ...config.database, url: url!, schema: database!.schema, maxBytes: config.notes.maxBytes, logger });
    lifecycle.defer(db.close);
    pools.set(name, db);
  }
  const loggerOf = (name: string) => logger.child({ service: name });
  const apps = {
    notes8080: () => notes8080.createApp({ db: pools.get(notes8080.name)!, config: config.notes, edge: config.edge.notes8080, logger: loggerOf(notes8080.name), stopping }),
    notes8000: () => notes8000.createApp({ db: pools.get(notes8000.name)!, config: config.notes, edge: config.edge.notes8000, logger: loggerOf(notes8000.name), stopping }),
    auth: () => auth.createApp({ db: pools.get(auth.name), config: config.auth, edge: config.edge.auth, logger: loggerOf(auth.name), spa: spa!, stopping }),
  };
  const servers = await listenAll(
    config.services.map((name) => ({ name, app: apps[name](), address: config.listen[name] })),
    limits,
  );
  lifecycle.defer(() => Promise.all(servers.map((server) => server.close(5_000))));
  // Deferred last, so it runs first: /ready answers 503 while everything still serves.
  const { drainMs } = config.connections;
  if (drainMs > 0) lifecycle.defer(() => new Promise((resolve) => setTimeout(resolve, drainMs)));
  return config.services.map((name, index) => ({ name, url: servers[index]!.url }));
}

/** The login service's pages: built (or, SPA_MODE=vite, served by Vite) by the process that prepares. */
async function preparePages(): Promise<Spa | undefined> {
  if (!config.services.includes('auth')) return undefined;
  const { mode, hmrPort } = config.spa;
  const spa = mode === 'prebuilt' ? await builtSpa() : await prepareSpa({ development: mode === 'vite', hmrPort, logger });
  lifecycle.defer(spa.close);
  return spa;
}

/** Says where each service listens: in the log, and to the process that started this one (see reportListening). */
function announce(listening: Listening): void {
  for (const { name, url } of listening) logger.info(`${name} listening on ${url}`);
  reportListening(listening);
}

try {
  if (cluster.isWorker) {
    // The primary has migrated the schemas and built the pages; DATABASE_URL is its server's.
    reportListening(await serve(config.database.url, config.services.includes('auth') ? await builtSpa() : undefined));
  } else if (config.workers > 1) {
    const [url] = await Promise.all([prepareDatabase(), preparePages()]);
    const workers = await startWorkers({ count: config.workers, env: url ? { DATABASE_URL: url } : {}, logger });
    lifecycle.defer(workers.stop);
    announce(workers.listening);
    logger.info({ workers: config.workers }, 'workers serving');
  } else {
    const [url, spa] = await Promise.all([prepareDatabase(), preparePages()]);
    announce(await serve(url, spa));
  }
} catch (error) {
  await lifecycle.failed(error);
}
