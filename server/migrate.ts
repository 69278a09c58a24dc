import { parseArgs } from 'node:util';
import { processEnvironment } from './shared/environment.js';
import { exitOnStartupError } from './shared/errors.js';
import { createLogger } from './shared/logger.js';
import { runMigrations } from './shared/migrations.js';
import { SERVICES } from './services.js';

/**
 * `npm run migrate [-- --env <service>]`: brings every service's schema (or one service's) on
 * DATABASE_URL (from the environment, or the working folder's `.env`) to its latest migration. The
 * services do this themselves at every start; this is for migrating by hand, before a deployment
 * say.
 */
const migrated = SERVICES.flatMap((service) =>
  service.database ? [{ name: service.name, ...service.database }] : [],
);
const { values } = parseArgs({ options: { env: { type: 'string' } } });
const env = exitOnStartupError(processEnvironment);
const url = env.DATABASE_URL;
const chosen =
  values.env === undefined ? migrated : migrated.filter((service) => service.name === values.env);

if (!url)
  fail('npm run migrate needs DATABASE_URL, the postgres:// URL of the database to migrate');
if (chosen.length === 0)
  fail(
    `--env ${values.env} names no service with a database; these have one: ${migrated.map((service) => service.name).join(', ')}`,
  );
const logger = createLogger(env.LOG_LEVEL ?? 'warn');
for (const { name, schema, migrations } of chosen) {
  try {
    await runMigrations({ url, schema, directory: migrations, logger });
  } catch (error) {
    fail(`${name}: the migrations of schema ${schema} failed: ${(error as Error).message}`);
  }
  console.log(`${name}: schema ${schema} is at its latest migration`);
}

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}
