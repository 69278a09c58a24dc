import { parseArgs } from 'node:util';
import { listenVariables, loadConfig } from './config.js';
import { startEmbeddedPostgres } from './db/embeddedPostgres.js';
import { exitOnStartupError, StartupError } from './http/errors.js';
import { lockDataDir } from './db/instanceLock.js';
import { createLogger } from './logger.js';
import { runMigrations } from './db/migrations.js';
import { SERVICES } from './services.js';

/**
 * `npm run migrate [-- --env <service>]`: brings every service's schema (or one service's) to its
 * latest migration, on DATABASE_URL, or else on the embedded PostgreSQL of DATA_DIR (started for
 * the while, when no instance runs on it). The services do this themselves at every start; this
 * is for migrating by hand, before a deployment say.
 */
const migrated = SERVICES.flatMap((service) =>
  service.database ? [{ name: service.name, ...service.database }] : [],
);
const { values } = parseArgs({ options: { env: { type: 'string' } } });
const config = exitOnStartupError(() => loadConfig());
const chosen =
  values.env === undefined ? migrated : migrated.filter((service) => service.name === values.env);
if (chosen.length === 0) {
  fail(
    `--env ${values.env} names no service with a database; these have one: ${migrated.map((service) => service.name).join(', ')}`,
  );
}
const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
const stops: (() => Promise<void>)[] = [];
try {
  const url = config.database.url ?? (await embeddedDatabase());
  for (const { name, schema, migrations } of chosen) {
    await runMigrations({ url, schema, directory: migrations, logger }).catch((error: Error) => {
      throw new StartupError(
        `${name}: the migrations of schema ${schema} failed: ${error.message}`,
      );
    });
    console.log(`${name}: schema ${schema} is at its latest migration`);
  }
} catch (error) {
  if (!(error instanceof StartupError)) throw error;
  process.exitCode = 1;
  process.stderr.write(`${error.message}\n`);
} finally {
  for (const stop of stops.reverse()) await stop();
}

async function embeddedDatabase(): Promise<string> {
  const { dataDir } = config.database;
  const ports = config.services.map((name) => listenVariables(name).port).join(', ');
  const lock = await lockDataDir(dataDir, ports);
  stops.push(lock.release);
  const server = await startEmbeddedPostgres({ dataDir, logger });
  stops.push(server.stop);
  return server.url;
}

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}
