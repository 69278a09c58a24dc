import type { Knex } from 'knex';

/**
 * The audit trail (see server/auth/postgresAuditLog.ts): the security events administrators read,
 * newest first by id, filtered by type or email, trimmed by age and count. `detail` is `json`, not
 * `jsonb`, so that it reads back as it was written. And `create_session` now returns the owner of
 * each live session its caps ended (and which cap), for the audit trail: still one round trip per
 * login, the lock, the caps and the insert as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE audit_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at timestamptz NOT NULL,
      type text NOT NULL,
      email text,
      user_id text,
      address text NOT NULL,
      user_agent text NOT NULL,
      request_id text NOT NULL,
      detail json NOT NULL
    )`);
  await knex.raw('CREATE INDEX audit_events_by_type ON audit_events (type, id)');
  await knex.raw('CREATE INDEX audit_events_by_email ON audit_events (email, id)');
  await knex.raw('CREATE INDEX audit_events_by_age ON audit_events (at)');
  await knex.raw('DROP FUNCTION create_session');
  await knex.raw(`
    CREATE FUNCTION create_session(session_id uuid, hashed_token bytea, owner text,
                                   ttl_seconds double precision, from_address text, agent text,
                                   made_with integer, most_per_user integer, most integer,
                                   login_lock bigint)
    RETURNS TABLE (ended_owner text, cap text)
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(login_lock);
      -- Every session lives as long, so the oldest rows, which the caps end first, are the expired
      -- ones, if any are left: an expired row never costs a live session its place, and is not
      -- reported as ended, since it had ended already.
      RETURN QUERY WITH ended AS (
        DELETE FROM sessions WHERE id IN (
          SELECT id FROM sessions WHERE user_id = owner
          ORDER BY created_at DESC OFFSET most_per_user - 1)
        RETURNING user_id, expires_at
      ) SELECT user_id, 'SESSION_MAX_PER_USER'::text FROM ended WHERE expires_at > now();
      RETURN QUERY WITH ended AS (
        DELETE FROM sessions WHERE id IN (
          SELECT id FROM sessions ORDER BY created_at DESC OFFSET most - 1)
        RETURNING user_id, expires_at
      ) SELECT user_id, 'SESSION_MAX'::text FROM ended WHERE expires_at > now();
      INSERT INTO sessions (id, token_hash, user_id, expires_at, address, user_agent, generation)
      VALUES (session_id, hashed_token, owner, now() + make_interval(secs => ttl_seconds),
              from_address, agent, made_with);
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION create_session');
  await knex.raw(`
    CREATE FUNCTION create_session(session_id uuid, hashed_token bytea, owner text,
                                   ttl_seconds double precision, from_address text, agent text,
                                   made_with integer, most_per_user integer, most integer,
                                   login_lock bigint) RETURNS void
    LANGUAGE sql VOLATILE AS $$
      SELECT pg_advisory_xact_lock(login_lock);
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions WHERE user_id = owner
        ORDER BY created_at DESC OFFSET most_per_user - 1);
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions ORDER BY created_at DESC OFFSET most - 1);
      INSERT INTO sessions (id, token_hash, user_id, expires_at, address, user_agent, generation)
      VALUES (session_id, hashed_token, owner, now() + make_interval(secs => ttl_seconds),
              from_address, agent, made_with);
    $$`);
  await knex.raw('DROP TABLE audit_events');
}
