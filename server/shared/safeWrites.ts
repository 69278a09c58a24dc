import type { Knex } from 'knex';
import { createIdempotencyKeys } from './idempotency.js';
import { createStorageCap } from './storageCap.js';
import { createWriteFence } from './writeFence.js';

/**
 * The migration of a notes service's safe writes: keys that make a create safe to retry, the cap
 * on what the notes (and the answers kept for those keys) take, and the check that keeps a write
 * its client gave up on from being applied. `textColumn`: the column holding a note's text.
 */
export function safeWritesMigration(textColumn: 'body' | 'content') {
  return {
    async up(knex: Knex): Promise<void> {
      await createIdempotencyKeys(knex);
      await createWriteFence(knex);
      await createStorageCap(knex, [
        { table: 'notes', bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.${textColumn})` },
        { table: 'idempotency_keys', bytes: (row) => `octet_length(${row}.row::text)` },
      ]);
    },
    async down(knex: Knex): Promise<void> {
      await knex.raw('DROP TABLE storage_usage, idempotency_keys; DROP FUNCTION notes_storage, idempotency_keys_storage, write_in_time');
    },
  };
}
