import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { ConfigError, type AuthConfig } from '../config.js';
import type { User } from '../../web/src/pageState.js';

export type { User };

export type PasswordHash = { salt: Buffer; key: Buffer; cost: number };

// Emails match whatever their letter case, as people type them.
export const normalizeEmail = (email: string) => email.toLowerCase();

/** The configured accounts, each password held only as a salted scrypt hash. */
export function createAccounts({ accounts, passwordHashCost }: AuthConfig) {
  const byEmail = new Map<string, { user: User; hash: Promise<PasswordHash> }>();
  accounts.forEach(({ email, password, role }, index) => {
    if (byEmail.has(normalizeEmail(email)))
      throw new ConfigError(`Two accounts share the email ${email}`);
    const user = { id: String(index + 1), email, role };
    byEmail.set(normalizeEmail(email), { user, hash: newPasswordHash(password, passwordHashCost) });
  });
  // An unknown email costs the same work as a wrong password, so timing reveals no email.
  const decoy = newPasswordHash(randomBytes(32).toString('hex'), passwordHashCost);
  const users = [...byEmail.values()].map(({ user }) => user);
  return {
    all: () => users,
    byId: (id: string) => users.find((user) => user.id === id),
    idOf: (email: string) => byEmail.get(normalizeEmail(email))?.user.id,
    /** Always costs one scrypt. */
    async authenticate(email: string, password: string): Promise<User | undefined> {
      const account = byEmail.get(normalizeEmail(email));
      const matches = await matchesHash(password, await (account?.hash ?? decoy));
      return matches ? account?.user : undefined;
    },
  };
}

export type Accounts = ReturnType<typeof createAccounts>;

export async function newPasswordHash(password: string, cost: number): Promise<PasswordHash> {
  const salt = randomBytes(16);
  return { salt, cost, key: await derive(password, salt, cost) };
}

export const matchesHash = async (password: string, { salt, key, cost }: PasswordHash) =>
  timingSafeEqual(await derive(password, salt, cost), key);

/** On libuv's thread pool, so a check never blocks the event loop. */
function derive(password: string, salt: Buffer, cost: number): Promise<Buffer> {
  // scrypt needs about 128 * N * r bytes: headroom above it, and Node's default 32 MiB as a floor.
  const options = { N: cost, r: 8, p: 1, maxmem: Math.max(32 * 1024 * 1024, 256 * cost * 8) };
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}
