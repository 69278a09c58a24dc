import type { Knex } from 'knex';
import { createIdempotencyKeys } from '../../shared/idempotency.js';
import { createStorageCap } from '../../shared/storageCap.js';
import { createWriteFence } from '../../shared/writeFence.js';

/**
 * Keys that make a create safe to retry, the cap on what the notes (and the answers kept for
 * those keys) take, and the check that keeps a write its client gave up on from being applied.
 */
export async function up(knex: Knex): Promise<void> {
  await createIdempotencyKeys(knex);
  await createWriteFence(knex);
  await createStorageCap(knex, [
    { table: 'notes', bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.body)` },
    { table: 'idempotency_keys', bytes: (row) => `octet_length(${row}.row::text)` },
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE storage_usage, idempotency_keys; DROP FUNCTION notes_storage, idempotency_keys_storage, write_in_time');
}
