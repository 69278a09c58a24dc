import { auth } from './auth/index.js';
import { prepareSpa } from './auth/spa.js';
import { notes8000 } from './notes8000/index.js';
import { notes8080 } from './notes8080/index.js';
import { loadConfig } from './shared/config.js';
import { createDatabase, waitForDatabase, type Database } from './shared/database.js';
import { startEmbeddedPostgres } from './shared/embeddedPostgres.js';
import { createLogger } from './shared/logger.js';
import { runMigrations } from './shared/migrations.js';
import { listen, type RunningServer } from './shared/serve.js';
import type { ServiceDescriptor } from './shared/service.js';
import type Koa from 'koa';

/**
 * Starts the three services in one process: the database (embedded unless DATABASE_URL is
 * set), each notes service's migrations, the login service's pages, then the listeners.
 * SIGINT/SIGTERM stop everything in reverse order and exit 0.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel);

const databaseServer = config.database.url
  ? { url: config.database.url, stop: async () => {} }
  : await startEmbeddedPostgres({ dataDir: config.database.dataDir, logger });
const pools: Database[] = [];
const servers: RunningServer[] = [];
const closers: (() => Promise<void>)[] = [];
let stopping = false;

async function shutdown(reason: string, exitCode = 0) {
  if (stopping) return;
  stopping = true;
  logger.info({ reason }, 'shutting down');
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(closers.map((close) => close()));
  await Promise.all(pools.map((pool) => pool.close()));
  await databaseServer.stop();
  logger.info('stopped');
  process.exit(exitCode);
}
// `on`, not `once`: Ctrl-C can deliver SIGINT twice (the terminal's, and npm's forwarded copy);
// the second must not kill the process half-way through its shutdown.
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

/** The service's own pool on its schema, once the database answers and the schema is migrated. */
async function databaseOf({ database }: ServiceDescriptor<unknown>): Promise<Database> {
  const { schema, migrations } = database!;
  const db = createDatabase({ ...config.database, url: databaseServer.url, schema, logger });
  pools.push(db);
  await waitForDatabase(db, config.database.startupRetryMs, logger);
  await runMigrations({ url: databaseServer.url, schema, directory: migrations, logger });
  return db;
}

async function start(name: string, app: Koa, address: { host: string; port: number }) {
  const server = await listen(app, address);
  servers.push(server);
  logger.info({ service: name, url: server.url }, `${name} listening on ${server.url}`);
}

try {
  const [db8080, db8000, spa] = await Promise.all([
    databaseOf(notes8080),
    databaseOf(notes8000),
    prepareSpa({ development: config.spaMode === 'vite', logger }),
  ]);
  closers.push(() => spa.close());
  const { bodyLimitBytes } = config;
  const child = (service: { name: string }) => logger.child({ service: service.name });
  await start(notes8080.name, notes8080.createApp({ db: db8080, bodyLimitBytes, logger: child(notes8080) }), config.notes8080);
  await start(notes8000.name, notes8000.createApp({ db: db8000, bodyLimitBytes, logger: child(notes8000) }), config.notes8000);
  await start(auth.name, auth.createApp({ config: config.auth, logger: child(auth), spa }), config.auth.listen);
} catch (error) {
  logger.fatal({ err: error }, 'start-up failed');
  await shutdown('start-up failure', 1);
}
