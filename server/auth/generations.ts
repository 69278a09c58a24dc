import type { Database } from '../db/pool.js';
import { matchesHash, newPasswordHash, normalizeEmail } from './accounts.js';

/**
 * Every session and device cookie is made with its account's credential generation, which a
 * change of email or password, or an administrator ending every session, replaces.
 */
export interface CredentialGenerations {
  /** Undefined when this instance's credential for the account was replaced by another's. */
  current(userId: string): Promise<number | undefined>;
  renew(userId: string): Promise<void>;
}

/** A restart ends every session and device key anyway, so they start afresh with the process. */
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

/** Held while an instance compares the stored credentials, so instances starting together agree. */
const CREDENTIALS_LOCK = 0x5e57;

/**
 * Generations in table `credentials`, with each account's email and salted scrypt hash. Each
 * instance compares them with its own at start: different, it stores its own with a new generation
 * (from a sequence, so none comes back) and the account's sessions end. It then knows the stored
 * credential by its salt: once another instance replaces it, this one admits no one to it.
 */
export class PostgresGenerations implements CredentialGenerations {
  #salts: Promise<Map<string, Buffer>> | undefined;

  constructor(
    private readonly db: Database,
    private readonly credentials: { id: string; email: string; password: string }[],
    private readonly passwordHashCost: number,
  ) {}

  /** Compares the stored credentials with this instance's, once; a failure is retried next call. */
  checked(): Promise<Map<string, Buffer>> {
    this.#salts ??= this.#compare().catch((error: unknown) => {
      this.#salts = undefined;
      throw error;
    });
    return this.#salts;
  }

  async current(userId: string): Promise<number | undefined> {
    const salt = (await this.checked()).get(userId);
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

  #compare(): Promise<Map<string, Buffer>> {
    return this.db.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock($1)', [CREDENTIALS_LOCK]);
      const salts = new Map<string, Buffer>();
      for (const { id, email, password } of this.credentials) {
        const { rows } = await query<{ email: string; salt: Buffer; key: Buffer; cost: number }>(
          'SELECT email, salt, password_hash AS key, cost FROM credentials WHERE user_id = $1',
          [id],
        );
        const stored = rows[0];
        if (stored?.email === normalizeEmail(email) && (await matchesHash(password, stored))) {
          salts.set(id, stored.salt);
          continue;
        }
        const { salt, key, cost } = await newPasswordHash(password, this.passwordHashCost);
        await query(
          `INSERT INTO credentials (user_id, email, salt, password_hash, cost)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, salt = excluded.salt,
             password_hash = excluded.password_hash, cost = excluded.cost,
             generation = nextval('credential_generations')`,
          [id, normalizeEmail(email), salt, key, cost],
        );
        await query('DELETE FROM sessions WHERE user_id = $1', [id]);
        salts.set(id, salt);
      }
      return salts;
    });
  }
}
