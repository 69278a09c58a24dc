import type Koa from 'koa';
import { createApp as createAuthApp } from './auth/app.js';
import { prepareSpa } from './auth/spa.js';
import * as notes8000 from './notes8000/database.js';
import { createApp as createNotes8000App } from './notes8000/app.js';
import * as notes8080 from './notes8080/database.js';
import { createApp as createNotes8080App } from './notes8080/app.js';
import { loadConfig, type Listen } from './shared/config.js';
import { createDatabase, waitForDatabase, type Database } from './shared/database.js';
import { openDatabaseServer } from './shared/databaseServer.js';
import { createLogger } from './shared/logger.js';
import { listen, type RunningServer } from './shared/serve.js';

/**
 * Starts the three services in one process: the database (embedded unless DATABASE_URL is
 * set), each notes service's migrations, the login service's pages, then the listeners.
 * SIGINT/SIGTERM stop everything in reverse order and exit 0.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel);

const databaseServer = await openDatabaseServer(config.database, logger);
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
  await Promise.all(pools.map((pool) => pool.destroy()));
  await databaseServer.stop();
  logger.info('stopped');
  process.exit(exitCode);
}
// `on`, not `once`: Ctrl-C can deliver SIGINT twice (the terminal's, and npm's forwarded copy);
// the second must not kill the process half-way through its shutdown.
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

async function notesDatabase(service: { SCHEMA: string; migrate(db: Database): Promise<void> }) {
  const db = createDatabase(databaseServer.url, service.SCHEMA, config.database, logger);
  pools.push(db);
  await waitForDatabase(db, config.database.startupRetryMs, logger);
  await service.migrate(db);
  return db;
}

async function start(name: string, app: Koa, address: Listen) {
  const server = await listen(app, address);
  servers.push(server);
  logger.info({ service: name, url: server.url }, `${name} listening on ${server.url}`);
}

try {
  const [db8080, db8000, spa] = await Promise.all([
    notesDatabase(notes8080),
    notesDatabase(notes8000),
    prepareSpa({ development: config.spaMode === 'vite', logger }),
  ]);
  closers.push(() => spa.close());
  const { bodyLimitBytes } = config;
  await start('notes-8080', createNotes8080App({ db: db8080, bodyLimitBytes, logger: logger.child({ service: 'notes-8080' }) }), config.notes8080);
  await start('notes-8000', createNotes8000App({ db: db8000, bodyLimitBytes, logger: logger.child({ service: 'notes-8000' }) }), config.notes8000);
  await start('auth', createAuthApp({ config: config.auth, logger: logger.child({ service: 'auth' }), spa }), config.auth.listen);
} catch (error) {
  logger.fatal({ err: error }, 'start-up failed');
  await shutdown('start-up failure', 1);
}
