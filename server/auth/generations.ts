import type { Database } from '../db/pool.js';
import { matchesHash, newPasswordHash, normalizeEmail } from './accounts.js';

/**
 * Each account's credential generation: a number every session and device cookie is made with,
 * and which changes when the account's email or password changes or when an administrator ends
 * every session of the account. A session or device cookie of an older generation is worthless.
 */
export interface CredentialGenerations {
  /**
   * The account's generation, or undefined when this instance's credential for it is no longer
   * the account's (an instance started since with another email or password).
   */
  current(userId: string): Promise<number | undefined>;
  /**
   * Starts a new generation of the account: its sessions and device cookies so far are worthless.
   */
  renew(userId: string): Promise<void>;
}

/**
 * Generations of this process: a restart already ends every session and makes every device
 * cookie unknown (the key is the process's own), so they start afresh with the process.
 */
export class MemoryGenerations implements CredentialGenerations {
  readonly #generations = new Map<string, number>();

  of(userId: string): number {
    return this.#generations.get(userId) ?? 1;
  }

  async current(userId: string): Promise<number> {
    return this.of(userId);
  }

  async renew(userId: string): Promise<void> {
    this.#generations.set(userId, this.of(userId) + 1);
  }
}

/** The configured account whose stored credential an instance compares with its own. */
export interface ConfiguredCredential {
  id: string;
  email: string;
  password: string;
}

/**
 * Held while an instance compares the stored credentials with its own, so that instances starting
 * together agree.
 */
const CREDENTIALS_LOCK = 0x5e57;

/**
 * Generations kept in PostgreSQL (table `credentials`), shared by every instance, with each
 * account's email and a salted scrypt hash of its password (a copy of the table is no easier to
 * guess from than any stored password hash). At start each instance compares them with its own:
 * the same, the generation stays; different, the instance stores its own with a new generation
 * (from a sequence, so that no generation ever comes back) and the account's sessions end. An
 * instance then knows the stored credential by its salt: once another instance has replaced it,
 * this one no longer admits anyone to the account.
 */
export class PostgresGenerations implements CredentialGenerations {
  #compared: Promise<Map<string, Buffer>> | undefined;

  constructor(
    private readonly db: Database,
    private readonly credentials: ConfiguredCredential[],
    private readonly passwordHashCost: number,
  ) {}

  /** Resolves once the stored credentials have been compared with this instance's (see #salts). */
  async checked(): Promise<void> {
    await this.#salts();
  }

  async current(userId: string): Promise<number | undefined> {
    const salt = (await this.#salts()).get(userId);
    const { rows } = await this.db.query<{ generation: number }>(
      'SELECT generation FROM credentials WHERE user_id = $1 AND salt = $2',
      [userId, salt],
    );
    return rows[0]?.generation;
  }

  async renew(userId: string): Promise<void> {
    await this.db.query(
      "UPDATE credentials SET generation = nextval('credential_generations') WHERE user_id = $1",
      [userId],
    );
  }

  /**
   * The salt of each account's stored credential, as this instance found or stored it: the first
   * call compares the stored credentials with this instance's, and a comparison that failed (the
   * database was away) is tried again at the next call.
   */
  #salts(): Promise<Map<string, Buffer>> {
    this.#compared ??= this.#compare().catch((error: unknown) => {
      this.#compared = undefined;
      throw error;
    });
    return this.#compared;
  }

  async #compare(): Promise<Map<string, Buffer>> {
    return this.db.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock($1)', [CREDENTIALS_LOCK]);
      const salts = new Map<string, Buffer>();
      for (const { id, email, password } of this.credentials) {
        const { rows } = await query<{
          email: string;
          salt: Buffer;
          password_hash: Buffer;
          cost: number;
        }>('SELECT email, salt, password_hash, cost FROM credentials WHERE user_id = $1', [id]);
        const stored = rows[0];
        if (
          stored &&
          stored.email === normalizeEmail(email) &&
          (await matchesHash(password, {
            salt: stored.salt,
            key: stored.password_hash,
            cost: stored.cost,
          }))
        ) {
          salts.set(id, stored.salt);
          continue;
        }
        const hash = await newPasswordHash(password, this.passwordHashCost);
        await query(
          `INSERT INTO credentials (user_id, email, salt, password_hash, cost) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, salt = excluded.salt, password_hash = excluded.password_hash,
             cost = excluded.cost, generation = nextval('credential_generations')`,
          [id, normalizeEmail(email), hash.salt, hash.key, hash.cost],
        );
        await query('DELETE FROM sessions WHERE user_id = $1', [id]);
        salts.set(id, hash.salt);
      }
      return salts;
    });
  }
}
