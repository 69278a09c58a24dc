import type { Knex } from 'knex';

/**
 * What the login service shares between its instances when SESSION_STORE=postgres: sessions
 * (the client's token is kept only as its SHA-256, so the table yields no usable token), the
 * failed logins the throttle counts, and the key that signs device cookies.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      token_hash bytea NOT NULL UNIQUE,
      user_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      address text NOT NULL,
      user_agent text NOT NULL
    )`);
  await knex.raw('CREATE INDEX sessions_by_user ON sessions (user_id, created_at)');
  await knex.raw('CREATE INDEX sessions_by_age ON sessions (created_at)');
  await knex.raw('CREATE INDEX sessions_by_expiry ON sessions (expires_at)');
  await knex.raw(
    'CREATE TABLE login_failures (key text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
  );
  await knex.raw('CREATE INDEX login_failures_by_key ON login_failures (key, at)');
  await knex.raw('CREATE INDEX login_failures_by_age ON login_failures (at)');
  await knex.raw(
    `CREATE TABLE device_key (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), key bytea NOT NULL)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sessions, login_failures, device_key');
}
