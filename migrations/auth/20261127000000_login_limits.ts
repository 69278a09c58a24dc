import type { Knex } from 'knex';

/**
 * Login limits move to rate-limiter-flexible: `login_limits` is the table its PostgreSQL store
 * reads and writes (a count and an expiry per key, in its own layout), in place of the failures
 * the service counted one row at a time. Counts in progress start again from zero.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE login_limits (
      key varchar(255) PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    )`);
  await knex.raw('DROP TABLE login_failures');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE TABLE login_failures (key text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
  );
  await knex.raw('CREATE INDEX login_failures_by_key ON login_failures (key, at)');
  await knex.raw('CREATE INDEX login_failures_by_age ON login_failures (at)');
  await knex.raw('DROP TABLE login_limits');
}
