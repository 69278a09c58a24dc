import type Koa from 'koa';
import { builtSpa, developmentSpa, ensureSpaBuilt } from './auth/spa.js';
import type { Config, Listen, ServiceName } from './config.js';
import { openEmbeddedPostgres } from './db/embeddedPostgres.js';
import { runMigrations } from './db/migrations.js';
import { createDatabase, waitForDatabase, type Database } from './db/pool.js';
import { connectionLimits, listenAll } from './http/listen.js';
import type { Tracing } from './http/tracing.js';
import { Lifecycle } from './lifecycle.js';
import { createLogger } from './logger.js';
import { auth, notes8000, notes8080 } from './services.js';

/**
 * The process: the database (embedded unless DATABASE_URL is set) with the migrations of each
 * service that keeps tables, the login pages, then every server, announced once all are bound.
 * Scale it by running more instances (with SESSION_STORE=postgres), not more processes of one.
 */
export async function start(config: Config, tracing?: Tracing): Promise<void> {
  const logger = createLogger(config.logLevel, config.logFormat, tracing?.lineFields);
  const lifecycle = new Lifecycle(logger, config.connections.drainMs);
  const defer = lifecycle.defer.bind(lifecycle);
  // Deferred first, so it runs last: the spans of the shutdown's requests are sent too.
  if (tracing) defer(tracing.shutdown);
  const settings = { notes8080: config.notes, notes8000: config.notes, auth: config.auth };
  const services = config.services.map((name) => ({ notes8080, notes8000, auth })[name]);
  const withDatabase = services.filter((service) =>
    service.usesDatabase(settings[service.name] as never),
  );

  /** A pool for each service that keeps tables, its schema brought up to date. */
  async function openDatabases(): Promise<Map<ServiceName, Database>> {
    const pools = new Map<ServiceName, Database>();
    if (withDatabase.length === 0) return pools;
    const url = config.database.url ?? (await openEmbeddedPostgres(config, logger, defer));
    const source = config.database.url ? 'DATABASE_URL' : 'the embedded PostgreSQL';
    await waitForDatabase(url, source, config.database, logger);
    // Each schema has its migrations and its lock: they run side by side.
    await Promise.all(
      withDatabase.map(({ database: { schema, migrations } }) =>
        runMigrations({ url, schema, directory: migrations, logger }),
      ),
    );
    const options = { ...config.database, url, maxBytes: config.notes.maxBytes, logger };
    for (const { name, database } of withDatabase) {
      const db = createDatabase({ ...options, schema: database.schema });
      defer(db.close);
      pools.set(name, db);
    }
    return pools;
  }

  async function preparePages() {
    const { mode, vitePort } = config.spa;
    if (!config.services.includes('auth')) return undefined;
    if (mode === 'vite') return developmentSpa(`http://localhost:${vitePort}`);
    if (mode === 'built') await ensureSpaBuilt({ logger });
    return builtSpa();
  }

  try {
    // Loaded only when the metrics are on: prom-client takes a while to load.
    const metrics = config.metrics && new (await import('./http/metrics.js')).Metrics(logger);
    const [pools, spa] = await Promise.all([openDatabases(), preparePages()]);
    for (const [name, db] of pools) metrics?.pool(name, db.connections);
    const hosting = { stopping: () => lifecycle.stopping, metrics, tracing };
    const servers: { name: string; app: Koa; address: Listen }[] = services.map(
      ({ name, createApp }) => ({
        name,
        address: config.listen[name],
        app: createApp({
          db: pools.get(name),
          config: settings[name],
          ...(name === 'auth' && { spa }),
          edge: config.edge[name],
          logger: logger.child({ service: name }),
          ...hosting,
        } as never),
      }),
    );
    if (metrics) servers.push({ name: 'metrics', app: metrics.app(), address: config.metrics! });
    const running = await listenAll(servers, connectionLimits(config));
    defer(() => Promise.all(running.map((server) => server.close(5_000))));
    // Deferred last, so it runs first: /ready answers 503 while everything still serves.
    const { drainMs } = config.connections;
    if (drainMs > 0) defer(() => new Promise((resolve) => setTimeout(resolve, drainMs)));
    const listening = servers.map(({ name }, index) => ({ name, url: running[index]!.url }));
    for (const { name, url: where } of listening) logger.info(`${name} listening on ${where}`);
    // The process that started this one (a test, npm run dev) learns where each service listens.
    process.send?.({ listening });
  } catch (error) {
    await lifecycle.failed(error);
  }
}
