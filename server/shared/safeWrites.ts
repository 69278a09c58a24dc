import type { Knex } from 'knex';
import { createIdempotencyKeys } from './idempotency.js';
import { createStorageCap, shardStorageCount, unshardStorageCount, type Counted } from './storageCap.js';
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

/**
 * The migration that takes the hot row out of every write and keeps idempotent answers as the
 * text they were sent as: the storage count moves into shards (see storageCap.ts), and each
 * recorded create keeps its answer's JSON text (`answer`), made from what it recorded before by
 * `answerOfRecordedRow`, an SQL expression over the old `row` column.
 */
export function leanWritesMigration(textColumn: 'body' | 'content', answerOfRecordedRow: string) {
  const counted = (recordBytes: Counted['bytes']): Counted[] => [
    { table: 'notes', bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.${textColumn})` },
    { table: 'idempotency_keys', bytes: recordBytes },
  ];
  return {
    async up(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE idempotency_keys ADD COLUMN answer text');
      await knex.raw(`UPDATE idempotency_keys SET answer = (${answerOfRecordedRow})`);
      await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN answer SET NOT NULL, DROP COLUMN row');
      await shardStorageCount(knex, counted((row) => `octet_length(${row}.answer)`));
    },
    async down(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE idempotency_keys ADD COLUMN row jsonb');
      await knex.raw('UPDATE idempotency_keys SET row = answer::jsonb');
      await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN row SET NOT NULL, DROP COLUMN answer');
      await unshardStorageCount(knex, counted((row) => `octet_length(${row}.row::text)`));
    },
  };
}
