import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/pool.js';
import type { SessionStore } from './sessions.js';

const TOKEN = /^(\d+)\.(\d+)\.(\d+)\.([\w-]+)\.([\w-]+)$/;

/**
 * Device cookies, `<account id>.<generation>.<issued at, s>.<random>.<HMAC-SHA256>`: proof that
 * the browser logged in to the account in this generation less than `trustDays` ago. They grant
 * nothing by themselves. The key is the process's own, or with `db` one every instance shares.
 */
export class DeviceTrust {
  #key: Promise<Buffer> | undefined;
  readonly maxAgeSeconds: number;

  constructor(
    trustDays: number,
    private readonly sessions: Pick<SessionStore, 'generation'>,
    private readonly db?: Database,
  ) {
    this.maxAgeSeconds = trustDays * 24 * 3600;
  }

  async issue(userId: string, generation: number): Promise<string> {
    const issuedAt = Math.floor(Date.now() / 1000);
    const claims = `${userId}.${generation}.${issuedAt}.${randomBytes(12).toString('base64url')}`;
    return `${claims}.${await this.#sign(claims)}`;
  }

  /** The device id of the first token of `userId` still trusted; the generation read last. */
  async recognize(tokens: string[], userId: string): Promise<string | undefined> {
    let current: Promise<number | undefined> | undefined;
    for (const token of tokens) {
      const [, id, generation, issuedAt, device, signature] = TOKEN.exec(token) ?? [];
      if (id !== userId || Number(issuedAt) + this.maxAgeSeconds <= Date.now() / 1000) continue;
      const expected = Buffer.from(await this.#sign(token.slice(0, token.lastIndexOf('.'))));
      const given = Buffer.from(signature!);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) continue;
      // Only for a token whose signature and age hold: forged or stale ones cost no statement.
      current ??= this.sessions.generation(userId);
      if (Number(generation) === (await current)) return device;
    }
  }

  async #sign(claims: string): Promise<string> {
    // Made by the first instance that needs it; a load that failed is tried again next time.
    this.#key ??= this.#load().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    return createHmac('sha256', await this.#key)
      .update(claims)
      .digest('base64url');
  }

  async #load(): Promise<Buffer> {
    const made = randomBytes(32);
    if (!this.db) return made;
    await this.db.query('INSERT INTO device_key (key) VALUES ($1) ON CONFLICT DO NOTHING', [made]);
    return (await this.db.query<{ key: Buffer }>('SELECT key FROM device_key')).rows[0]!.key;
  }
}
