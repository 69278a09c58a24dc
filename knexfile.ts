import type { Knex } from 'knex';

/**
 * For operators running migrations by hand with the knex CLI (the services run them
 * themselves at start-up): `DATABASE_URL=... npm run migrate -- --env notes8080`.
 * Each notes service keeps its table in a schema of its own.
 */
const connection = process.env.DATABASE_URL;

const forSchema = (schema: string): Knex.Config => ({
  client: 'pg',
  connection,
  searchPath: [schema],
  // The migrations table lives in the schema, so the schema must exist before knex looks.
  pool: {
    afterCreate: (conn: { query: (sql: string, done: (error?: Error) => void) => void }, done: (error: Error | undefined, conn: unknown) => void) =>
      conn.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`, (error) => done(error, conn)),
  },
  migrations: { directory: `./server/${schema}/migrations`, schemaName: schema, loadExtensions: ['.ts'] },
});

export default {
  notes8080: forSchema('notes8080'),
  notes8000: forSchema('notes8000'),
};
