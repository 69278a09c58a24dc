import type { Knex } from 'knex';
import { createIdempotencyKeys, FINGERPRINT_BYTES } from './idempotency.js';
import {
  createStorageCap,
  recountStorage,
  reserveStorage,
  shardStorageCount,
  unreserveStorage,
  unshardStorageCount,
  type Counted,
} from './storageCap.js';
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
        {
          table: 'notes',
          bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.${textColumn})`,
        },
        { table: 'idempotency_keys', bytes: (row) => `octet_length(${row}.row::text)` },
      ]);
    },
    async down(knex: Knex): Promise<void> {
      await knex.raw(
        'DROP TABLE storage_usage, idempotency_keys; DROP FUNCTION notes_storage, idempotency_keys_storage, write_in_time',
      );
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
    {
      table: 'notes',
      bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.${textColumn})`,
    },
    { table: 'idempotency_keys', bytes: recordBytes },
  ];
  return {
    async up(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE idempotency_keys ADD COLUMN answer text');
      await knex.raw(`UPDATE idempotency_keys SET answer = (${answerOfRecordedRow})`);
      await knex.raw(
        'ALTER TABLE idempotency_keys ALTER COLUMN answer SET NOT NULL, DROP COLUMN row',
      );
      await shardStorageCount(
        knex,
        counted((row) => `octet_length(${row}.answer)`),
      );
    },
    async down(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE idempotency_keys ADD COLUMN row jsonb');
      await knex.raw('UPDATE idempotency_keys SET row = answer::jsonb');
      await knex.raw(
        'ALTER TABLE idempotency_keys ALTER COLUMN row SET NOT NULL, DROP COLUMN answer',
      );
      await unshardStorageCount(
        knex,
        counted((row) => `octet_length(${row}.row::text)`),
      );
    },
  };
}

/** The largest id a note may have: JSON numbers are exact up to it (2^53 - 1). */
export const MAX_NOTE_ID = Number.MAX_SAFE_INTEGER;

/**
 * What a row takes besides its text, measured with pg_total_relation_size on PostgreSQL 15 to 18
 * (one-letter notes: 88 bytes each, heap, primary key and free-space maps together): its tuple
 * header, id, timestamps and version, its index entry, and the slack of the pages it sits in.
 */
const NOTE_ROW_BYTES = 96;
/**
 * An idempotency record besides its texts: the same, and its key a second time, in the key's index.
 */
const KEY_ROW_BYTES = 120;

/** The bytes of texts, as the count measures them (octet_length). */
export const textBytes = (...texts: string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/**
 * What a create adds to the count (as measuredRows measures it), worked out from the request
 * before anything is stored: the note's texts and its row, and with an Idempotency-Key its record,
 * whose kept answer is taken as the note's texts (the JSON around them is under a hundred bytes).
 */
export function createdBytes(texts: string[], key: string | undefined): number {
  const text = textBytes(...texts);
  const note = text + NOTE_ROW_BYTES;
  return key === undefined
    ? note
    : note + 2 * Buffer.byteLength(key) + FINGERPRINT_BYTES + text + KEY_ROW_BYTES;
}

/** The counted tables, each row measured as what it costs on disk. */
const measuredRows = (textColumn: 'body' | 'content'): Counted[] => [
  {
    table: 'notes',
    bytes: (row) =>
      `octet_length(${row}.title) + octet_length(${row}.${textColumn}) + ${NOTE_ROW_BYTES}`,
  },
  {
    table: 'idempotency_keys',
    bytes: (row) =>
      `2 * octet_length(${row}.key) + octet_length(${row}.fingerprint) + octet_length(${row}.answer) + ${KEY_ROW_BYTES}`,
  },
];

/**
 * The migration of notes that never lose an update and never run out of ids: a `version` that
 * every change of a note raises (its ETag), ids as bigint (a create attempt spends one whether it
 * succeeds or not) with the sequence stopping at MAX_NOTE_ID, and the storage count made honest:
 * each row counts what it costs on disk, not its text alone.
 */
export function versionedNotesMigration(textColumn: 'body' | 'content') {
  const idSequence = async (knex: Knex) =>
    (
      await knex.raw<{ rows: { sequence: string | null }[] }>(
        "SELECT pg_get_serial_sequence('notes', 'id') AS sequence",
      )
    ).rows[0]!.sequence;
  return {
    async up(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE notes ALTER COLUMN id TYPE bigint');
      const sequence = await idSequence(knex);
      if (sequence) await knex.raw(`ALTER SEQUENCE ${sequence} AS bigint MAXVALUE ${MAX_NOTE_ID}`);
      await knex.raw('ALTER TABLE notes ADD COLUMN version integer NOT NULL DEFAULT 1');
      await recountStorage(knex, measuredRows(textColumn));
    },
    async down(knex: Knex): Promise<void> {
      await knex.raw('ALTER TABLE notes DROP COLUMN version');
      const sequence = await idSequence(knex);
      if (sequence) await knex.raw(`ALTER SEQUENCE ${sequence} AS integer MAXVALUE 2147483647`);
      await knex.raw('ALTER TABLE notes ALTER COLUMN id TYPE integer');
      await recountStorage(knex, [
        {
          table: 'notes',
          bytes: (row) => `octet_length(${row}.title) + octet_length(${row}.${textColumn})`,
        },
        { table: 'idempotency_keys', bytes: (row) => `octet_length(${row}.answer)` },
      ]);
    },
  };
}

/**
 * The migration that makes the cap exact and the count cheap: each shard of the count gets a
 * reserve checked against the cap, which writes spend without summing the shards (see
 * storageCap.ts). Summing them at every write cost PostgreSQL about half as much again as the
 * write itself.
 */
export function reservedStorageMigration(textColumn: 'body' | 'content') {
  return {
    up: (knex: Knex) => reserveStorage(knex, measuredRows(textColumn)),
    down: (knex: Knex) => unreserveStorage(knex, measuredRows(textColumn)),
  };
}

/**
 * The migration that lets a note change without end: its version (its ETag) as bigint, as its id
 * already is. Every change raises it by one, so an integer ran out after 2^31 changes of one
 * note, and every later update of it failed.
 */
export const wideVersionsMigration = {
  up: async (knex: Knex) =>
    void (await knex.raw('ALTER TABLE notes ALTER COLUMN version TYPE bigint')),
  down: async (knex: Knex) =>
    void (await knex.raw('ALTER TABLE notes ALTER COLUMN version TYPE integer')),
};
