import type Koa from 'koa';
import { builtSpa, prepareSpa, type Spa } from './auth/spa.js';
import { listenVariables, type Config, type Listen } from './config.js';
import { startEmbeddedPostgres } from './db/embeddedPostgres.js';
import { lockDataDir } from './db/instanceLock.js';
import { runMigrations } from './db/migrations.js';
import { createDatabase, waitForDatabase, type Database } from './db/pool.js';
import type { Hosting } from './http/app.js';
import { StartupError } from './http/errors.js';
import { fileLimit, RESERVED_DESCRIPTORS } from './http/fileDescriptors.js';
import { listenAll, type ConnectionLimits } from './http/listen.js';
import type { Tracing } from './http/tracing.js';
import { Lifecycle, type Listening } from './lifecycle.js';
import { createLogger } from './logger.js';
import { auth, notes8000, notes8080 } from './services.js';

/**
 * The process: the database (embedded unless DATABASE_URL is set), the migrations and pool of
 * each service that keeps tables, the login service's pages, then every address bound before any
 * service is announced; with METRICS_PORT set, the metrics too. SIGINT, SIGTERM and SIGHUP stop
 * everything in reverse order. `tracing`: the traces main.ts started, if any. Scale it by running
 * more instances (with SESSION_STORE=postgres), not more processes of one instance.
 */
export async function start(config: Config, tracing?: Tracing): Promise<void> {
  const logger = createLogger(config.logLevel, config.logFormat, tracing?.lineFields);
  const lifecycle = new Lifecycle(logger, config.connections.drainMs);
  // Deferred first, so it runs last: the spans of the shutdown's requests are sent too.
  if (tracing) lifecycle.defer(tracing.shutdown);
  // Loaded only when the metrics are on: prom-client takes a while to load.
  const metrics = config.metrics && new (await import('./http/metrics.js')).Metrics(logger);
  const hosting: Hosting = { stopping: () => lifecycle.stopping, metrics, tracing };
  const services = { notes8080, notes8000, auth };
  const configs = { notes8080: config.notes, notes8000: config.notes, auth: config.auth };
  const withDatabase = config.services
    .map((name) => services[name])
    .filter((service) => service.usesDatabase(configs[service.name] as never));

  /** The database server, every schema brought up to date; none when no service keeps tables. */
  async function prepareDatabase(): Promise<string | undefined> {
    if (withDatabase.length === 0) return undefined;
    let url = config.database.url;
    if (!url) {
      const { dataDir } = config.database;
      const ports = config.services.map((name) => listenVariables(name).port).join(', ');
      lifecycle.defer((await lockDataDir(dataDir, ports)).release);
      const embedded = await startEmbeddedPostgres({ dataDir, logger });
      lifecycle.defer(embedded.stop);
      url = embedded.url;
    }
    await waitForDatabase(url, {
      retryMs: config.database.startupRetryMs,
      timeoutMs: config.database.timeoutMs,
      logger,
      source: config.database.url ? 'DATABASE_URL' : 'the embedded PostgreSQL',
    });
    // Each schema has its migrations and its lock: they run side by side.
    await Promise.all(
      withDatabase.map(({ database: { schema, migrations } }) =>
        runMigrations({ url, schema, directory: migrations, logger }),
      ),
    );
    return url;
  }

  /** The login service's pages: the build, or (SPA_MODE=vite) Vite's dev server. */
  async function preparePages(): Promise<Spa | undefined> {
    if (!config.services.includes('auth')) return undefined;
    const { mode, vitePort } = config.spa;
    if (mode === 'prebuilt') return builtSpa();
    return prepareSpa({ development: mode === 'vite', vitePort, logger });
  }

  /** Each service's app on its own pool, and the metrics; resolves with where each listens. */
  async function serve(url: string | undefined, spa: Spa | undefined): Promise<Listening> {
    const pools = new Map<string, Database>();
    for (const { name, database } of withDatabase) {
      const db = createDatabase({
        ...config.database,
        url: url!,
        schema: database.schema,
        maxBytes: config.notes.maxBytes,
        logger,
      });
      lifecycle.defer(db.close);
      pools.set(name, db);
      metrics?.pool(name, db.connections);
    }
    const common = (name: 'notes8080' | 'notes8000' | 'auth') => ({
      edge: config.edge[name],
      logger: logger.child({ service: name }),
      ...hosting,
    });
    const apps: Record<string, () => Koa> = {
      notes8080: () =>
        notes8080.createApp({
          db: pools.get('notes8080')!,
          config: config.notes,
          ...common('notes8080'),
        }),
      notes8000: () =>
        notes8000.createApp({
          db: pools.get('notes8000')!,
          config: config.notes,
          ...common('notes8000'),
        }),
      auth: () =>
        auth.createApp({
          db: pools.get('auth'),
          config: config.auth,
          spa: spa!,
          ...common('auth'),
        }),
    };
    const servers: { name: string; app: Koa; address: Listen }[] = config.services.map((name) => ({
      name,
      app: apps[name]!(),
      address: config.listen[name],
    }));
    if (metrics) servers.push({ name: 'metrics', app: metrics.app(), address: config.metrics! });
    const running = await listenAll(servers, connectionLimits(config));
    lifecycle.defer(() => Promise.all(running.map((server) => server.close(5_000))));
    // Deferred last, so it runs first: /ready answers 503 while everything still serves.
    const { drainMs } = config.connections;
    if (drainMs > 0) lifecycle.defer(() => new Promise((resolve) => setTimeout(resolve, drainMs)));
    return servers.map(({ name }, index) => ({ name, url: running[index]!.url }));
  }

  try {
    const [url, spa] = await Promise.all([prepareDatabase(), preparePages()]);
    const listening = await serve(url, spa);
    for (const { name, url: where } of listening) logger.info(`${name} listening on ${where}`);
    // The process that started this one (a test, npm run dev) learns where each service listens.
    process.send?.({ listening });
  } catch (error) {
    await lifecycle.failed(error);
  }
}

/** What each server lets its clients hold: together, the services stay under the files limit. */
function connectionLimits(config: Config): ConnectionLimits {
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
