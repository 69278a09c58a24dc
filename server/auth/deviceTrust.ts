import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/pool.js';
import type { CredentialGenerations } from './generations.js';

export interface DeviceTrustOptions {
  /** Days a device cookie is trusted after its login. */
  trustDays: number;
  generations: CredentialGenerations;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * Device cookies: a browser that logged in to an account gets a token naming the account, its
 * credential generation and the time of the login, signed with a key of the service, which it
 * shows at its next logins: `<account id>.<generation>.<issued at, s>.<random>.<HMAC-SHA256>`. It
 * proves the browser was the account's, since a login of this generation less than `trustDays`
 * ago; it grants nothing by itself. The key is this process's own, or, shared by every instance,
 * kept in PostgreSQL.
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

  /** The key every instance on the database signs with: made by the first that needs it. */
  static inPostgres(db: Database, options: DeviceTrustOptions): DeviceTrust {
    return new DeviceTrust(async () => {
      await db.query('INSERT INTO device_key (key) VALUES ($1) ON CONFLICT DO NOTHING', [
        randomBytes(32),
      ]);
      return (await db.query<{ key: Buffer }>('SELECT key FROM device_key')).rows[0]!.key;
    }, options);
  }

  /** The cookie's Max-Age: as long as the server trusts it. */
  get maxAgeSeconds(): number {
    return (this.options.trustDays * DAY_MS) / 1000;
  }

  async issue(userId: string, generation: number): Promise<string> {
    const claims = `${userId}.${generation}.${Math.floor(Date.now() / 1000)}.${randomBytes(12).toString('base64url')}`;
    return `${claims}.${await this.#sign(claims)}`;
  }

  /**
   * The device's id from the first of `tokens` issued for `userId` that is still trusted;
   * otherwise undefined. The account's generation is read only for a token whose signature and
   * age hold, so forged or stale tokens cost no statement.
   */
  async recognize(tokens: string[], userId: string): Promise<string | undefined> {
    let generation: Promise<number | undefined> | undefined;
    for (const token of tokens) {
      const claims = await this.#verified(token, userId);
      if (!claims) continue;
      generation ??= this.options.generations.current(userId);
      if (claims.generation === (await generation)) return claims.device;
    }
    return undefined;
  }

  /**
   * What a token says, when its signature is the service's, it names `userId`, and its age is
   * within the trust.
   */
  async #verified(
    token: string,
    userId: string,
  ): Promise<{ generation: number; device: string } | undefined> {
    const parts = token.split('.');
    if (parts.length !== 5) return undefined;
    const [id, generation, issuedAt, device, signature] = parts as [
      string,
      string,
      string,
      string,
      string,
    ];
    if (id !== userId || !/^\d+$/.test(generation) || !/^\d+$/.test(issuedAt) || !device)
      return undefined;
    if (Number(issuedAt) * 1000 + this.options.trustDays * DAY_MS <= Date.now()) return undefined;
    const expected = Buffer.from(await this.#sign(parts.slice(0, 4).join('.')));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected)
      ? { generation: Number(generation), device }
      : undefined;
  }

  /** The key, loaded once; a load that failed (the database was away) is tried again next time. */
  #signingKey(): Promise<Buffer> {
    this.#key ??= this.loadKey().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    return this.#key;
  }

  async #sign(claims: string): Promise<string> {
    return createHmac('sha256', await this.#signingKey())
      .update(claims)
      .digest('base64url');
  }
}
