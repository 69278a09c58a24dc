import type { Knex } from 'knex';

/**
 * `updated_at` is set by the store's update, which already works out whether the note changed
 * (its version moves then too), instead of by a trigger per row: the trigger's call cost
 * PostgreSQL about a tenth of an update.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER notes_touch_updated_at ON notes');
  await knex.raw('DROP FUNCTION notes_touch_updated_at()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notes_touch_updated_at() RETURNS trigger AS $$
    BEGIN
      NEW.updated_at := now();
      RETURN NEW;
    END
    $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE TRIGGER notes_touch_updated_at BEFORE UPDATE ON notes FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.content IS DISTINCT FROM NEW.content)
    EXECUTE FUNCTION notes_touch_updated_at()`);
}
