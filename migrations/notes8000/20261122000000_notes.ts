import type { Knex } from 'knex';

/**
 * The `notes` table, created when missing (an existing one, e.g. made by an earlier version of
 * the service, is kept as it is). The store owns the timestamps: both default to now(), and a
 * trigger refreshes `updated_at` whenever an UPDATE really changes the title or the content,
 * so an update that changes nothing leaves it as it was (as SQLAlchemy, which then sends no
 * UPDATE at all, does).
 */
export async function up(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasTable('notes'))) {
    await knex.schema.createTable('notes', (table) => {
      table.increments('id');
      table.string('title', 100).notNullable();
      table.text('content').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  }
  await knex.raw(`
    CREATE OR REPLACE FUNCTION notes_touch_updated_at() RETURNS trigger AS $$
    BEGIN
      NEW.updated_at := now();
      RETURN NEW;
    END
    $$ LANGUAGE plpgsql`);
  await knex.raw('DROP TRIGGER IF EXISTS notes_touch_updated_at ON notes');
  await knex.raw(`
    CREATE TRIGGER notes_touch_updated_at BEFORE UPDATE ON notes FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.content IS DISTINCT FROM NEW.content)
    EXECUTE FUNCTION notes_touch_updated_at()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('notes');
  await knex.raw('DROP FUNCTION IF EXISTS notes_touch_updated_at()');
}
