import path from 'node:path';
import knex from 'knex';
import { SERVICES } from '../server/services.js';

/**
 * `npm run migrate:make <service> <name>`: a new migration of the service's schema,
 * `migrations/<service>/<timestamp>_<name>.ts`, from the repository's stub: its SQL written out
 * in `up` and `down`, importing nothing from `server/`.
 */
const [service, name] = process.argv.slice(2);
const services: string[] = SERVICES.map((known) => known.name);
if (!service || !name || !services.includes(service) || !/^[a-z0-9_]+$/.test(name)) {
  process.stderr.write(
    `usage: npm run migrate:make <service> <name>, the service ` +
      `one of ${services.join(', ')}, the name in snake_case\n`,
  );
  process.exit(1);
}
// Knex writes the file; it needs no connection for it.
const written = await knex({ client: 'pg' }).migrate.make(name, {
  directory: path.join('migrations', service),
  extension: 'ts',
  stub: path.join(import.meta.dirname, 'migration.stub'),
});
console.log(`wrote ${path.relative(process.cwd(), written)}`);
