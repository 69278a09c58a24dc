import type { Knex } from 'knex';
import { SERVICES } from './server/services.js';
import { processEnvironment } from './server/config.js';

/**
 * For operators who drive the knex CLI themselves (status, rollback):
 * `DATABASE_URL=… npx knex --knexfile knexfile.ts migrate:status --env notes8080`, under tsx.
 * `npm run migrate` and the services' own start-up migrate without it. Each service keeps its
 * tables, and its migrations table, in a schema of its own.
 */
const { DATABASE_URL } = processEnvironment();

const forSchema = ({
  schema,
  migrations,
}: {
  schema: string;
  migrations: string;
}): Knex.Config => ({
  client: 'pg',
  connection: DATABASE_URL,
  searchPath: [schema],
  // The migrations table lives in the schema, so the schema must exist before knex looks.
  pool: {
    afterCreate: (
      conn: { query: (sql: string, done: (error?: Error) => void) => void },
      done: (error: Error | undefined, conn: unknown) => void,
    ) => conn.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`, (error) => done(error, conn)),
  },
  migrations: { directory: migrations, schemaName: schema, loadExtensions: ['.ts'] },
});

export default Object.fromEntries(
  SERVICES.flatMap((service) =>
    service.database ? [[service.name, forSchema(service.database)]] : [],
  ),
);
