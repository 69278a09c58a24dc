import cluster from 'node:cluster';
import type Koa from 'koa';
import { auth } from './auth/index.js';
import { builtSpa, prepareSpa, type Spa } from './auth/spa.js';
import { notes8000 } from './notes8000/index.js';
import { notes8080 } from './notes8080/index.js';
import { listenVariables, type Config, type Listen, type ServiceName } from './shared/config.js';
import { createDatabase, waitForDatabase, type Database } from './shared/database.js';
import { startEmbeddedPostgres } from './shared/embeddedPostgres.js';
import { StartupError } from './shared/errors.js';
import { fileLimit, RESERVED_DESCRIPTORS } from './shared/fileDescriptors.js';
import { lockDataDir } from './shared/instanceLock.js';
import { Lifecycle } from './shared/lifecycle.js';
import { createLogger } from './shared/logger.js';
import { runMigrations } from './shared/migrations.js';
import type { Scrape } from './shared/metrics.js';
import { bothWatches } from './shared/requestWatch.js';
import { listenAll, type ConnectionLimits } from './shared/serve.js';
import { needsDatabase, type Hosting } from './shared/service.js';
import type { Tracing } from './shared/tracing.js';
import { reportListening, startWorkers, type Listening } from './shared/workers.js';

/**
 * The process: the database (embedded unless DATABASE_URL is set), the migrations and pool of
 * each service that keeps tables, the login service's pages, then every address bound before any
 * service is announced; with METRICS_PORT set, the metrics too. With WORKERS above 1, this process
 * (the primary) prepares the database and the pages and serves the metrics, and cluster workers,
 * each running this same program, serve. SIGINT, SIGTERM and SIGHUP stop everything in reverse
 * order. `tracing`: the traces main.ts started, if any.
 */
export async function run(config: Config, tracing?: Tracing): Promise<void> {
  const logger = createLogger(config.logLevel, config.logFormat, tracing?.lineFields).child(
    cluster.isWorker ? { worker: cluster.worker!.id } : {},
  );
  const lifecycle = new Lifecycle(logger, config.connections.drainMs);
  // Deferred first, so it runs last: the spans of the shutdown's requests are sent too.
  if (tracing) lifecycle.defer(tracing.shutdown);
  const stopping = () => lifecycle.stopping;
  // Loaded only when the metrics are on: prom-client takes a while to load.
  const measuring = config.metrics ? await import('./shared/metrics.js') : undefined;
  // What this process measures, when it serves (a primary sums its workers' metrics instead).
  const metrics =
    measuring && (cluster.isWorker || config.workers === 1)
      ? new measuring.Metrics(logger)
      : undefined;
  /**
   * Whether each service keeps tables with these settings (the login service only with
   * SESSION_STORE=postgres).
   */
  const keepsTables: Record<ServiceName, boolean> = {
    notes8080: needsDatabase(notes8080, config.notes),
    notes8000: needsDatabase(notes8000, config.notes),
    auth: needsDatabase(auth, config.auth),
  };
  const descriptors = { notes8080, notes8000, auth };
  const withDatabase = config.services
    .filter((name) => keepsTables[name])
    .map((name) => descriptors[name]);

  /**
   * The database's URL: DATABASE_URL, or the embedded server on DATA_DIR, which this process alone
   * may run.
   */
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

  /**
   * The database server, reachable, with every schema brought up to date; undefined when no service
   * keeps tables.
   */
  async function prepareDatabase(): Promise<string | undefined> {
    if (withDatabase.length === 0) return undefined;
    const url = await openDatabaseServer();
    const source = config.database.url ? 'DATABASE_URL' : 'the embedded PostgreSQL';
    await waitForDatabase(url, {
      retryMs: config.database.startupRetryMs,
      timeoutMs: config.database.timeoutMs,
      logger,
      source,
    });
    // Each schema has its migrations and its lock of its own: they run side by side.
    await Promise.all(
      withDatabase.map(({ database }) =>
        runMigrations({ url, schema: database!.schema, directory: database!.migrations, logger }),
      ),
    );
    return url;
  }

  /**
   * What each server lets its clients hold; the connections each service may hold together stay
   * under the open-files limit.
   */
  function connectionLimits(): ConnectionLimits {
    const count = config.services.length;
    const limit = fileLimit() ?? 10_000 * count + RESERVED_DESCRIPTORS;
    const fits = Math.floor((limit - RESERVED_DESCRIPTORS) / count);
    const { max, idleTimeoutMs, headersTimeoutMs } = config.connections;
    if (max !== undefined && max > fits) {
      throw new StartupError(
        `MAX_CONNECTIONS=${max} is too many: ${count} services × ${max} connections and ${RESERVED_DESCRIPTORS} other files do not fit in the open-files limit (${limit}); set it to at most ${fits}`,
      );
    }
    return { maxConnections: max ?? fits, idleTimeoutMs, headersTimeoutMs };
  }

  /** The metrics server, answering with `scrape`, as listenAll binds it. */
  const metricsServer = (scrape: Scrape) => ({
    name: 'metrics',
    app: measuring!.metricsApp(scrape, logger),
    address: config.metrics!,
  });

  /**
   * What the process gives `name`'s service: the stop, and what measures and traces its requests.
   */
  const hostingOf = (name: string): Hosting => ({
    stopping,
    watch: bothWatches(metrics?.requests(name), tracing?.requests(name)),
    measures: metrics?.measures(name),
  });

  /**
   * Makes each service's app on its own pool and binds them all, with the metrics unless this is a
   * worker (its primary serves them); resolves with where each listens.
   */
  async function serve(url: string | undefined, spa: Spa | undefined): Promise<Listening> {
    const limits = connectionLimits();
    const pools = new Map<string, Database>();
    for (const { name, database } of withDatabase) {
      const db = createDatabase({
        ...config.database,
        url: url!,
        schema: database!.schema,
        maxBytes: config.notes.maxBytes,
        logger,
      });
      lifecycle.defer(db.close);
      pools.set(name, db);
      metrics?.pool(name, db.connections);
    }
    const loggerOf = (name: string) => logger.child({ service: name });
    const apps = {
      notes8080: () =>
        notes8080.createApp({
          db: pools.get(notes8080.name)!,
          config: config.notes,
          edge: config.edge.notes8080,
          logger: loggerOf(notes8080.name),
          ...hostingOf(notes8080.name),
        }),
      notes8000: () =>
        notes8000.createApp({
          db: pools.get(notes8000.name)!,
          config: config.notes,
          edge: config.edge.notes8000,
          logger: loggerOf(notes8000.name),
          ...hostingOf(notes8000.name),
        }),
      auth: () =>
        auth.createApp({
          db: pools.get(auth.name),
          config: config.auth,
          edge: config.edge.auth,
          logger: loggerOf(auth.name),
          spa: spa!,
          ...hostingOf(auth.name),
        }),
    };
    const servers: { name: string; app: Koa; address: Listen }[] = config.services.map((name) => ({
      name,
      app: apps[name](),
      address: config.listen[name],
    }));
    if (metrics && !cluster.isWorker) servers.push(metricsServer(metrics.scrape()));
    const running = await listenAll(servers, limits);
    lifecycle.defer(() => Promise.all(running.map((server) => server.close(5_000))));
    // Deferred last, so it runs first: /ready answers 503 while everything still serves.
    const { drainMs } = config.connections;
    if (drainMs > 0) lifecycle.defer(() => new Promise((resolve) => setTimeout(resolve, drainMs)));
    return servers.map(({ name }, index) => ({ name, url: running[index]!.url }));
  }

  /** The sum of the workers' metrics, served by the primary. */
  async function serveWorkersMetrics(): Promise<Listening> {
    if (!measuring) return [];
    const [server] = await listenAll(
      [metricsServer(measuring.workersScrape())],
      connectionLimits(),
    );
    lifecycle.defer(() => server!.close(5_000));
    return [{ name: 'metrics', url: server!.url }];
  }

  /**
   * The login service's pages: built (or, SPA_MODE=vite, served by Vite) by the process that
   * prepares.
   */
  async function preparePages(): Promise<Spa | undefined> {
    if (!config.services.includes('auth')) return undefined;
    const { mode, vitePort } = config.spa;
    const spa =
      mode === 'prebuilt'
        ? await builtSpa()
        : await prepareSpa({ development: mode === 'vite', vitePort, logger });
    lifecycle.defer(spa.close);
    return spa;
  }

  /**
   * Says where each service listens: in the log, and to the process that started this one (see
   * reportListening).
   */
  function announce(listening: Listening): void {
    for (const { name, url } of listening) logger.info(`${name} listening on ${url}`);
    reportListening(listening);
  }

  try {
    if (cluster.isWorker) {
      // The primary has migrated the schemas and built the pages; DATABASE_URL is its server's.
      metrics?.answerPrimary();
      reportListening(
        await serve(
          config.database.url,
          config.services.includes('auth') ? await builtSpa() : undefined,
        ),
      );
    } else if (config.workers > 1) {
      const [url] = await Promise.all([prepareDatabase(), preparePages()]);
      const metricsListening = await serveWorkersMetrics();
      const workers = await startWorkers({
        count: config.workers,
        env: url ? { DATABASE_URL: url } : {},
        logger,
      });
      lifecycle.defer(workers.stop);
      announce([...workers.listening, ...metricsListening]);
      logger.info({ workers: config.workers }, 'workers serving');
    } else {
      const [url, spa] = await Promise.all([prepareDatabase(), preparePages()]);
      announce(await serve(url, spa));
    }
  } catch (error) {
    await lifecycle.failed(error);
  }
}
