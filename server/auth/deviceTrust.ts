import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/pool.js';
import type { CredentialGenerations } from './generations.js';

interface DeviceTrustOptions {
  trustDays: number;
  generations: CredentialGenerations;
}

const DAY_SECONDS = 24 * 3600;

/**
 * Device cookies, `<account id>.<generation>.<issued at, s>.<random>.<HMAC-SHA256>`: proof that
 * the browser logged in to the account in this generation less than `trustDays` ago. They grant
 * nothing by themselves. The key is the process's own, or shared by every instance in PostgreSQL.
 */
export class DeviceTrust {
  #key: Promise<Buffer> | undefined;

  private constructor(
    private readonly loadKey: () => Promise<Buffer>,
    private readonly options: DeviceTrustOptions,
  ) {}

  static inMemory(options: DeviceTrustOptions): DeviceTrust {
    const key = randomBytes(32);
    return new DeviceTrust(async () => key, options);
  }

  /** Made by the first instance that needs it. */
  static inPostgres(db: Database, options: DeviceTrustOptions): DeviceTrust {
    return new DeviceTrust(async () => {
      await db.query('INSERT INTO device_key (key) VALUES ($1) ON CONFLICT DO NOTHING', [
        randomBytes(32),
      ]);
      return (await db.query<{ key: Buffer }>('SELECT key FROM device_key')).rows[0]!.key;
    }, options);
  }

  get maxAgeSeconds(): number {
    return this.options.trustDays * DAY_SECONDS;
  }

  async issue(userId: string, generation: number): Promise<string> {
    const claims =
      `${userId}.${generation}.${Math.floor(Date.now() / 1000)}.` +
      randomBytes(12).toString('base64url');
    return `${claims}.${await this.#sign(claims)}`;
  }

  /**
   * The device id of the first token of `userId` still trusted. The generation is read only for a
   * token whose signature and age hold, so forged or stale tokens cost no statement.
   */
  async recognize(tokens: string[], userId: string): Promise<string | undefined> {
    let current: Promise<number | undefined> | undefined;
    for (const token of tokens) {
      const parts = token.split('.');
      const [id, generation, issuedAt, device, signature] = parts;
      if (
        parts.length !== 5 ||
        id !== userId ||
        !/^\d+$/.test(generation!) ||
        !/^\d+$/.test(issuedAt!) ||
        !device ||
        Number(issuedAt) + this.maxAgeSeconds <= Date.now() / 1000
      )
        continue;
      const expected = Buffer.from(await this.#sign(parts.slice(0, 4).join('.')));
      const given = Buffer.from(signature!);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) continue;
      current ??= this.options.generations.current(userId);
      if (Number(generation) === (await current)) return device;
    }
    return undefined;
  }

  async #sign(claims: string): Promise<string> {
    // Loaded once; a load that failed (the database away) is tried again next time.
    this.#key ??= this.loadKey().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    return createHmac('sha256', await this.#key)
      .update(claims)
      .digest('base64url');
  }
}
