import type { Knex } from 'knex';

/**
 * The `notes` table is created if it does not exist; an existing table only gets its missing
 * columns added, and nothing it already has is changed (docs/specs/notes-service-8080.md, section
 * 1). Unqualified: the connection's search_path is the service's schema.
 */
const COLUMNS: Record<string, (table: Knex.AlterTableBuilder, knex: Knex) => void> = {
  id: (table) => table.increments('id'),
  title: (table) => table.string('title', 200).notNullable(),
  body: (table) => table.text('body').notNullable().defaultTo(''),
  created_at: (table, knex) =>
    table
      .timestamp('created_at', { useTz: true, precision: 3 })
      .notNullable()
      .defaultTo(knex.fn.now()),
};

export async function up(knex: Knex): Promise<void> {
  const exists = await knex.schema.hasTable('notes');
  const missing: string[] = [];
  for (const column of Object.keys(COLUMNS)) {
    if (!exists || !(await knex.schema.hasColumn('notes', column))) missing.push(column);
  }
  if (missing.length === 0) return;
  const build = (table: Knex.AlterTableBuilder) =>
    missing.forEach((column) => COLUMNS[column](table, knex));
  await (exists ? knex.schema.alterTable('notes', build) : knex.schema.createTable('notes', build));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('notes');
}
