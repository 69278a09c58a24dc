import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ConfigError, type AuthConfig } from '../config.js';

/** A user as clients see it: never the password or its hash. */
export interface User {
  id: string;
  email: string;
  role: 'user' | 'admin';
}

export interface Accounts {
  /** The user whose email and password these are, or undefined. Always costs one scrypt. */
  authenticate(email: string, password: string): Promise<User | undefined>;
  /** The id of the account with this email, or undefined. */
  idOf(email: string): string | undefined;
  /** The account with this id, or undefined. */
  byId(id: string): User | undefined;
  /** Every account, in their order of configuration. */
  all(): User[];
}

// Decision: emails match whatever their letter case, as people type them.
export const normalizeEmail = (email: string) => email.toLowerCase();

/**
 * The fixed accounts, each password held only as a salted scrypt hash. Throws ConfigError for two
 * accounts with one email.
 */
export function createAccounts({ accounts, passwordHashCost }: AuthConfig): Accounts {
  const byEmail = new Map<string, { user: User; hash: Promise<PasswordHash> }>();
  accounts.forEach(({ email, password, role }, index) => {
    if (byEmail.has(normalizeEmail(email))) {
      throw new ConfigError(`Two accounts share the email ${email}`);
    }
    byEmail.set(normalizeEmail(email), {
      user: { id: String(index + 1), email, role },
      hash: newPasswordHash(password, passwordHashCost),
    });
  });
  // An unknown email is checked against this hash of a random password, so that it costs the
  // same work as a wrong password and response times do not reveal which emails exist.
  const decoy = newPasswordHash(randomBytes(32).toString('hex'), passwordHashCost);
  const byId = new Map([...byEmail.values()].map(({ user }) => [user.id, user]));

  return {
    idOf: (email) => byEmail.get(normalizeEmail(email))?.user.id,
    byId: (id) => byId.get(id),
    all: () => [...byEmail.values()].map(({ user }) => user),
    async authenticate(email, password) {
      const account = byEmail.get(normalizeEmail(email));
      const matches = await matchesHash(password, await (account?.hash ?? decoy));
      return matches && account ? account.user : undefined;
    },
  };
}

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const BLOCK_SIZE = 8;

export interface PasswordHash {
  salt: Buffer;
  key: Buffer;
  cost: number;
}

function options(cost: number): ScryptOptions {
  // scrypt needs about 128 * N * r bytes; leave headroom so a higher cost never trips the limit,
  // and keep Node's default (32 MiB) as the floor so the smallest costs are not refused either.
  return {
    N: cost,
    r: BLOCK_SIZE,
    p: 1,
    maxmem: Math.max(32 * 1024 * 1024, 256 * cost * BLOCK_SIZE),
  };
}

/** A new salted hash of `password`, made on libuv's thread pool. */
export async function newPasswordHash(password: string, cost: number): Promise<PasswordHash> {
  const salt = randomBytes(SALT_BYTES);
  return { salt, cost, key: await derive(password, salt, cost) };
}

/** Runs scrypt on libuv's thread pool, so a login never blocks the event loop. */
export async function matchesHash(password: string, hash: PasswordHash): Promise<boolean> {
  return timingSafeEqual(await derive(password, hash.salt, hash.cost), hash.key);
}

function derive(password: string, salt: Buffer, cost: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_BYTES, options(cost), (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}
