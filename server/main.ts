import { auth } from './auth/index.js';
import { prepareSpa } from './auth/spa.js';
import { notes8000 } from './notes8000/index.js';
import { notes8080 } from './notes8080/index.js';
import { SERVICES } from './services.js';
import { listenVariables, loadConfig, type Config } from './shared/config.js';
import { createDatabase, waitForDatabase, type Database } from './shared/database.js';
import { startEmbeddedPostgres } from './shared/embeddedPostgres.js';
import { StartupError } from './shared/errors.js';
import { raiseFileLimit, RESERVED_DESCRIPTORS } from './shared/fileDescriptors.js';
import { lockDataDir } from './shared/instanceLock.js';
import { Lifecycle } from './shared/lifecycle.js';
import { createLogger } from './shared/logger.js';
import { runMigrations } from './shared/migrations.js';
import { listenAll } from './shared/serve.js';
import type { ServiceDescriptor } from './shared/service.js';

/**
 * The process: its configuration, the database (embedded unless DATABASE_URL is set), each
 * service's migrations and pool, the login service's pages, then every address bound before any
 * service is announced. SIGINT, SIGTERM and SIGHUP stop everything in reverse order.
 */
let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof StartupError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
const logger = createLogger(config.logLevel, config.logFormat);
const lifecycle = new Lifecycle(logger);

/** The database's URL: DATABASE_URL, or the embedded server on DATA_DIR, which this process alone may run. */
async function openDatabaseServer(): Promise<string> {
  const { url, dataDir } = config.database;
  if (url) return url;
  const otherPorts = SERVICES.map((service) => listenVariables(service.name).port).join(', ');
  const lock = await lockDataDir(dataDir, otherPorts);
  lifecycle.defer(lock.release);
  const server = await startEmbeddedPostgres({ dataDir, logger });
  lifecycle.defer(server.stop);
  return server.url;
}

/** The service's own pool on its schema, once the schema is migrated. */
async function databaseOf(url: string, { database }: ServiceDescriptor<unknown>): Promise<Database> {
  const { schema, migrations } = database!;
  await runMigrations({ url, schema, directory: migrations, logger });
  const db = createDatabase({ ...config.database, url, schema, maxBytes: config.notes.maxBytes, logger });
  lifecycle.defer(db.close);
  return db;
}

/** Connections each service may hold: together, they stay under the open-files limit. */
function connectionBudget(): number {
  const limit = raiseFileLimit(logger) ?? 10_000 * SERVICES.length + RESERVED_DESCRIPTORS;
  const fits = Math.floor((limit - RESERVED_DESCRIPTORS) / SERVICES.length);
  const { max } = config.connections;
  if (max !== undefined && max > fits) {
    throw new StartupError(
      `MAX_CONNECTIONS=${max} is too many: ${SERVICES.length} services × ${max} connections and ${RESERVED_DESCRIPTORS} other files do not fit in the open-files limit (${limit}); set it to at most ${fits}`,
    );
  }
  return max ?? fits;
}

try {
  const { idleTimeoutMs, headersTimeoutMs } = config.connections;
  const limits = { maxConnections: connectionBudget(), idleTimeoutMs, headersTimeoutMs };
  const url = await openDatabaseServer();
  const source = config.database.url ? 'DATABASE_URL' : 'the embedded PostgreSQL';
  await waitForDatabase(url, { retryMs: config.database.startupRetryMs, timeoutMs: config.database.timeoutMs, logger, source });
  const [db8080, db8000, spa] = await Promise.all([
    databaseOf(url, notes8080),
    databaseOf(url, notes8000),
    prepareSpa({ development: config.spa.mode === 'vite', hmrPort: config.spa.hmrPort, logger }),
  ]);
  lifecycle.defer(spa.close);
  const loggerOf = (service: { name: string }) => logger.child({ service: service.name });
  const servers = await listenAll(
    [
      {
        name: notes8080.name,
        app: notes8080.createApp({ db: db8080, config: config.notes, edge: config.edge.notes8080, logger: loggerOf(notes8080) }),
        address: config.listen.notes8080,
      },
      {
        name: notes8000.name,
        app: notes8000.createApp({ db: db8000, config: config.notes, edge: config.edge.notes8000, logger: loggerOf(notes8000) }),
        address: config.listen.notes8000,
      },
      {
        name: auth.name,
        app: auth.createApp({ config: config.auth, edge: config.edge.auth, logger: loggerOf(auth), spa }),
        address: config.listen.auth,
      },
    ],
    limits,
  );
  lifecycle.defer(() => Promise.all(servers.map((server) => server.close(5_000))));
  SERVICES.forEach(({ name }, index) => logger.info(`${name} listening on ${servers[index]!.url}`));
} catch (error) {
  await lifecycle.failed(error);
}
