import type { Knex } from 'knex';

/**
 * Each account's credential generation (see server/auth/generations.ts): the account's email and
 * a salted scrypt hash of its password as the instances last agreed on them, and the generation
 * every session is made with. Sessions made before generations were kept belong to none, so they
 * end here. A login's session is made by one statement, `create_session`: its lock, the caps and
 * the insert in one round trip (each of its statements sees the rows committed before it ran, as
 * separate statements of a transaction would).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE credential_generations AS integer');
  await knex.raw(`
    CREATE TABLE credentials (
      user_id text PRIMARY KEY,
      email text NOT NULL,
      salt bytea NOT NULL,
      password_hash bytea NOT NULL,
      cost integer NOT NULL,
      generation integer NOT NULL DEFAULT nextval('credential_generations')
    )`);
  await knex.raw('DELETE FROM sessions');
  await knex.raw('ALTER TABLE sessions ADD COLUMN generation integer NOT NULL');
  await knex.raw(`
    CREATE FUNCTION create_session(session_id uuid, hashed_token bytea, owner text,
                                   ttl_seconds double precision, from_address text, agent text,
                                   made_with integer, most_per_user integer, most integer,
                                   login_lock bigint) RETURNS void
    LANGUAGE sql VOLATILE AS $$
      SELECT pg_advisory_xact_lock(login_lock);
      -- Every session lives as long, so the oldest rows, which the caps end first, are the expired
      -- ones, if any are left: an expired row never costs a live session its place.
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions WHERE user_id = owner
        ORDER BY created_at DESC OFFSET most_per_user - 1);
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions ORDER BY created_at DESC OFFSET most - 1);
      INSERT INTO sessions (id, token_hash, user_id, expires_at, address, user_agent, generation)
      VALUES (session_id, hashed_token, owner, now() + make_interval(secs => ttl_seconds),
              from_address, agent, made_with);
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION create_session');
  await knex.raw('ALTER TABLE sessions DROP COLUMN generation');
  await knex.raw('DROP TABLE credentials');
  await knex.raw('DROP SEQUENCE credential_generations');
}
