import type { Knex } from 'knex';
import { createIdempotencyKeys } from '../../shared/idempotency.js';
import { createStorageCap } from '../../shared/storageCap.js';

/** Keys that make a create safe to retry, and the cap on what the notes (and the answers kept for those keys) take. */
export async function up(knex: Knex): Promise<void> {
  await createIdempotencyKeys(knex);
  await createStorageCap(knex, [
    { table: 'notes', bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.content)` },
    { table: 'idempotency_keys', bytes: (row) => `octet_length(${row}.row::text)` },
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE storage_usage, idempotency_keys; DROP FUNCTION notes_storage, idempotency_keys_storage');
}
