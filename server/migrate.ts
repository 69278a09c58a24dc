import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { openEmbeddedPostgres } from './db/embeddedPostgres.js';
import { runMigrations } from './db/migrations.js';
import { exitOnStartupError, StartupError } from './http/errors.js';
import { createLogger } from './logger.js';
import { SERVICES } from './services.js';

// `npm run migrate [-- --env <service>]`: what every start does, by hand (before a deployment,
// say), on DATABASE_URL or else on DATA_DIR's embedded PostgreSQL, started for the while.
const config = exitOnStartupError(() => loadConfig());
const { env } = parseArgs({ options: { env: { type: 'string' } } }).values;
const chosen = SERVICES.filter(({ name }) => env === undefined || name === env);
const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
const stops: (() => Promise<void>)[] = [];
try {
  if (chosen.length === 0)
    throw new StartupError(
      `--env ${env} names no service with a database; ` +
        `these have one: ${SERVICES.map(({ name }) => name).join(', ')}`,
    );
  const url =
    config.database.url ??
    (await openEmbeddedPostgres(config, logger, (stop) => stops.unshift(stop)));
  for (const { name, database } of chosen) {
    const { schema, migrations } = database;
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
  for (const stop of stops) await stop();
}
