import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { tooManyRequests } from '../http/errors.js';

/** What a row takes on disk besides its text, as the storage count measures it (the migration). */
const NOTE_ROW_BYTES = 96;
const KEY_ROW_BYTES = 120;
/** A key's fingerprint: a base64url SHA-256. */
const FINGERPRINT_BYTES = 43;

export const overBudget = (wait: number) =>
  `This address has written its share (NOTES_WRITE_BYTES_PER_MINUTE): try again in ${wait} s`;

/**
 * The bytes each client address may add to the storage count per minute, kept by
 * rate-limiter-flexible as the login limits are. A write past it is refused (429, with the seconds
 * until the address's minute ends) and takes nothing; an address is forgotten when its minute ends.
 */
export function writeBudget(bytesPerMinute: number) {
  const limiter = new RateLimiterMemory({
    keyPrefix: 'writes',
    points: bytesPerMinute,
    duration: 60,
  });
  return async (client: string, bytes: number): Promise<void> => {
    try {
      await limiter.consume(client, bytes);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      await limiter.reward(client, bytes);
      const wait = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw tooManyRequests(overBudget(wait), wait);
    }
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
