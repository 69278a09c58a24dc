import type { Knex } from 'knex';

/**
 * What the login service shares between its instances when SESSION_STORE=postgres: its sessions
 * (each token kept only as its SHA-256, so the table yields no usable token), each account's
 * credential generation with the salted scrypt hash of the password the instances agreed on, the
 * key that signs device cookies, and the login limits in rate-limiter-flexible's own layout.
 *
 * A login's session is made by one statement, `create_session`: its lock, the caps and the insert
 * in one round trip. Every session lives as long, so the oldest rows, which the caps end first,
 * are the expired ones if any are left: an expired row never costs a live session its place, and
 * is not reported as ended, since it had ended already.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SEQUENCE credential_generations AS integer;
    CREATE TABLE credentials (
      user_id text PRIMARY KEY,
      email text NOT NULL,
      salt bytea NOT NULL,
      password_hash bytea NOT NULL,
      cost integer NOT NULL,
      generation integer NOT NULL DEFAULT nextval('credential_generations')
    );
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      token_hash bytea NOT NULL UNIQUE,
      user_id text NOT NULL,
      generation integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      address text NOT NULL,
      user_agent text NOT NULL
    );
    CREATE INDEX sessions_by_user ON sessions (user_id, created_at);
    CREATE INDEX sessions_by_age ON sessions (created_at);
    CREATE INDEX sessions_by_expiry ON sessions (expires_at);
    CREATE TABLE device_key (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      key bytea NOT NULL
    );
    CREATE TABLE login_limits (
      key varchar(255) PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    );

    CREATE FUNCTION create_session(session_id uuid, hashed_token bytea, owner text,
                                   ttl_seconds double precision, from_address text, agent text,
                                   made_with integer, most_per_user integer, most integer,
                                   login_lock bigint)
    RETURNS TABLE (ended_owner text, cap text, ended integer)
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(login_lock);
      RETURN QUERY WITH gone AS (
        DELETE FROM sessions WHERE id IN (
          SELECT id FROM sessions WHERE user_id = owner
          ORDER BY created_at DESC OFFSET most_per_user - 1)
        RETURNING user_id, expires_at
      ) SELECT user_id, 'SESSION_MAX_PER_USER', count(*)::integer FROM gone
        WHERE expires_at > now() GROUP BY user_id;
      RETURN QUERY WITH gone AS (
        DELETE FROM sessions WHERE id IN (
          SELECT id FROM sessions ORDER BY created_at DESC OFFSET most - 1)
        RETURNING user_id, expires_at
      ) SELECT user_id, 'SESSION_MAX', count(*)::integer FROM gone
        WHERE expires_at > now() GROUP BY user_id;
      INSERT INTO sessions (id, token_hash, user_id, expires_at, address, user_agent, generation)
      VALUES (session_id, hashed_token, owner, now() + make_interval(secs => ttl_seconds),
              from_address, agent, made_with);
    END
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION create_session;
    DROP TABLE sessions, credentials, device_key, login_limits;
    DROP SEQUENCE credential_generations;
  `);
}
