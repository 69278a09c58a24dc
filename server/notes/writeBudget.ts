import { tooManyRequests } from '../http/errors.js';

/** Addresses tracked at most (about 150 bytes each). */
const MAX_ADDRESSES = 50_000;
/** What a row takes on disk besides its text, as the storage count measures it (the migration). */
const NOTE_ROW_BYTES = 96;
const KEY_ROW_BYTES = 120;
/** A key's fingerprint: a base64url SHA-256. */
const FINGERPRINT_BYTES = 43;

export const overBudget = (wait: number) =>
  `This address has written its share (NOTES_WRITE_BYTES_PER_MINUTE): try again in ${wait} s`;
const refuse = (wait: number): never => {
  throw tooManyRequests(overBudget(wait), wait);
};

/**
 * The bytes each client address may add to the storage count per minute: a token bucket per
 * address, refilled at `bytesPerMinute`. An address whose bucket is full again is forgotten; when
 * the table is full of addresses that still owe, a newcomer is refused rather than anyone
 * forgotten early. Returns `spend`: takes a write's bytes from its client's budget, or refuses it
 * (429) saying when they will be there, taking nothing.
 */
export function writeBudget(bytesPerMinute: number) {
  const buckets = new Map<string, { tokens: number; at: number }>(); // least recently written first
  const perMs = bytesPerMinute / 60_000;
  return (client: string, bytes: number): void => {
    const now = performance.now();
    for (const [address, { at }] of buckets) {
      if (now - at < 60_000) break;
      buckets.delete(address);
    }
    const known = buckets.get(client);
    if (!known && buckets.size >= MAX_ADDRESSES) refuse(60);
    const tokens = known
      ? Math.min(bytesPerMinute, known.tokens + (now - known.at) * perMs)
      : bytesPerMinute;
    if (tokens < bytes)
      refuse(Math.max(1, Math.ceil((Math.min(bytes, bytesPerMinute) - tokens) / perMs / 1000)));
    buckets.delete(client);
    buckets.set(client, { tokens: tokens - bytes, at: now });
  };
}

/** The bytes of texts, as the count measures them (octet_length). */
export const textBytes = (...texts: string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/**
 * What a create adds to the count: the note's texts and row, and with an Idempotency-Key its
 * record, whose kept answer is taken as the note's texts.
 */
export function createdBytes(texts: string[], keyed?: { client: string; key: string }): number {
  const text = textBytes(...texts);
  if (!keyed) return text + NOTE_ROW_BYTES;
  const record = textBytes(keyed.client) + 2 * textBytes(keyed.key) + FINGERPRINT_BYTES;
  return 2 * text + NOTE_ROW_BYTES + record + KEY_ROW_BYTES;
}
