import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ConfigError } from '../shared/config.js';

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
  return { N: cost, r: BLOCK_SIZE, p: 1, maxmem: Math.max(32 * 1024 * 1024, 256 * cost * BLOCK_SIZE) };
}

export function assertValidCost(cost: number): void {
  if (cost < 2 || (cost & (cost - 1)) !== 0) {
    throw new ConfigError(`PASSWORD_HASH_COST must be a power of two greater than 1, got ${cost}`);
  }
}

/** Synchronous: only used at start-up for the fixed accounts, never while serving requests. */
export function hashPassword(password: string, cost: number): PasswordHash {
  const salt = randomBytes(SALT_BYTES);
  return { salt, cost, key: scryptSync(password, salt, KEY_BYTES, options(cost)) };
}

/** Runs scrypt on libuv's thread pool, so a login never blocks the event loop. */
export function matchesHash(password: string, hash: PasswordHash): Promise<boolean> {
  return new Promise((resolve, reject) => {
    scrypt(password, hash.salt, KEY_BYTES, options(hash.cost), (error, key) => {
      if (error) reject(error);
      else resolve(timingSafeEqual(key, hash.key));
    });
  });
}
