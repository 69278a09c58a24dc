import { randomBytes } from 'node:crypto';
import { ConfigError, type AuthConfig } from '../shared/config.js';
import { assertValidCost, hashPassword, matchesHash, type PasswordHash } from './passwords.js';

/** A user as clients see it: never the password or its hash. */
export interface User {
  id: string;
  email: string;
  role: 'user' | 'admin';
}

export interface Accounts {
  /** The user whose email and password these are, or undefined. Always costs one scrypt. */
  authenticate(email: string, password: string): Promise<User | undefined>;
}

// Decision: emails match whatever their letter case, as people type them.
export const normalizeEmail = (email: string) => email.toLowerCase();

export function createAccounts({ accounts, passwordHashCost }: AuthConfig): Accounts {
  assertValidCost(passwordHashCost);
  const byEmail = new Map<string, { user: User; hash: PasswordHash }>();
  accounts.forEach(({ email, password, role }, index) => {
    if (byEmail.has(normalizeEmail(email))) {
      throw new ConfigError(`Two accounts share the email ${email}`);
    }
    byEmail.set(normalizeEmail(email), {
      user: { id: String(index + 1), email, role },
      hash: hashPassword(password, passwordHashCost),
    });
  });
  // An unknown email is checked against this hash of a random password, so that it costs the
  // same work as a wrong password and response times do not reveal which emails exist.
  const decoy = hashPassword(randomBytes(32).toString('hex'), passwordHashCost);

  return {
    async authenticate(email, password) {
      const account = byEmail.get(normalizeEmail(email));
      const matches = await matchesHash(password, account?.hash ?? decoy);
      return matches && account ? account.user : undefined;
    },
  };
}
