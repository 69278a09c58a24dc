import type { Knex } from 'knex';

/**
 * Each account's credential generation (see server/auth/generations.ts): the account's email and
 * a salted scrypt hash of its password as the instances last agreed on them, and the generation
 * every session is made with. Sessions made before generations were kept belong to none, so they
 * end here.
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
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN generation');
  await knex.raw('DROP TABLE credentials');
  await knex.raw('DROP SEQUENCE credential_generations');
}
