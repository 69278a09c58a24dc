import type { Database } from '../db/pool.js';
import { matchesHash, newPasswordHash, normalizeEmail, type PasswordHash } from './accounts.js';

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
  of = (userId: string) => this.#generations.get(userId) ?? 1;
  current = async (userId: string) => this.of(userId);
  renew = async (userId: string) => void this.#generations.set(userId, this.of(userId) + 1);
}

/** Held while an instance compares the stored credentials, so instances starting together agree. */
const CREDENTIALS_LOCK = 0x5e57;

const STORE = `INSERT INTO credentials (user_id, email, salt, password_hash, cost)
  VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, salt = excluded.salt,
    password_hash = excluded.password_hash, cost = excluded.cost,
    generation = nextval('credential_generations')`;

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
    return (this.#salts ??= this.#compare().catch((error: unknown) => {
      this.#salts = undefined;
      throw error;
    }));
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
      for (const { id, password, ...account } of this.credentials) {
        const email = normalizeEmail(account.email);
        const { rows } = await query<PasswordHash & { email: string }>(
          'SELECT email, salt, password_hash AS key, cost FROM credentials WHERE user_id = $1',
          [id],
        );
        let stored = rows[0];
        if (stored?.email !== email || !(await matchesHash(password, stored))) {
          stored = { email, ...(await newPasswordHash(password, this.passwordHashCost)) };
          await query(STORE, [id, email, stored.salt, stored.key, stored.cost]);
          await query('DELETE FROM sessions WHERE user_id = $1', [id]);
        }
        salts.set(id, stored.salt);
      }
      return salts;
    });
  }
}
