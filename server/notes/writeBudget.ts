/**
 * The bytes each client address (clientKey) may write to a notes service per minute: a token
 * bucket per address, full at `bytesPerMinute` and refilled at that rate, from which each create
 * and update takes what it adds to the storage count (see spend). The specs have no
 * authentication, so this is what keeps one client from filling the storage cap for everyone.
 * Kept in this process (per instance and worker); the table is bounded: an address whose bucket
 * is full again owes nothing and is forgotten, and when the table is full of addresses that still
 * owe, a newcomer is refused rather than anyone forgotten early.
 */
export class WriteBudget {
  /** Least recently written first: a bucket's refill is complete a minute after its last write. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #perMs: number;

  constructor(
    private readonly bytesPerMinute: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxAddresses = MAX_ADDRESSES,
  ) {
    this.#perMs = bytesPerMinute / 60_000;
  }

  /**
   * Takes `bytes` from the address's budget; or, taking nothing, says in how many seconds they will
   * be there.
   */
  take(address: string, bytes: number): number | undefined {
    const now = this.now();
    this.#forgetRefilled(now);
    const known = this.#buckets.get(address);
    if (!known && this.#buckets.size >= this.maxAddresses) return 60;
    const tokens = known
      ? Math.min(this.bytesPerMinute, known.tokens + (now - known.at) * this.#perMs)
      : this.bytesPerMinute;
    if (tokens < bytes)
      return Math.max(
        1,
        Math.ceil((Math.min(bytes, this.bytesPerMinute) - tokens) / this.#perMs / 1000),
      );
    this.#buckets.delete(address);
    this.#buckets.set(address, { tokens: tokens - bytes, at: now });
    return undefined;
  }

  #forgetRefilled(now: number): void {
    for (const [address, { at }] of this.#buckets) {
      if (now - at < 60_000) return;
      this.#buckets.delete(address);
    }
  }
}

/**
 * Addresses tracked at most: each is about 150 bytes, so the table stays under 10 MB. Filling
 * it takes this many addresses each writing within the same minute.
 */
const MAX_ADDRESSES = 50_000;

/** What a row takes on disk besides its text, as the storage count measures it (the migration). */
const NOTE_ROW_BYTES = 96;
const KEY_ROW_BYTES = 120;
/** The length of a key's fingerprint (a base64url SHA-256). */
const FINGERPRINT_BYTES = 43;

/** The bytes of texts, as the count measures them (octet_length). */
export const textBytes = (...texts: string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/**
 * What a create adds to the count, worked out before anything is stored: the note's texts and
 * row, and with an Idempotency-Key its record, whose kept answer is taken as the note's texts
 * (the JSON around them is under a hundred bytes).
 */
export function createdBytes(texts: string[], keyed?: { client: string; key: string }): number {
  const text = textBytes(...texts);
  const note = text + NOTE_ROW_BYTES;
  if (!keyed) return note;
  const { client, key } = keyed;
  const record = textBytes(client) + 2 * textBytes(key) + FINGERPRINT_BYTES + text + KEY_ROW_BYTES;
  return note + record;
}
