import { randomUUID } from 'node:crypto';
import type { User } from './accounts.js';

interface Session {
  user: User;
  expiresAt: number;
}

/**
 * The in-memory session table, token → user. Every session lives `ttlSeconds`, so the Map's
 * insertion order is also expiry order: expired sessions are swept from its head at each login,
 * and when `max` sessions exist the oldest is evicted first. Lookups also check expiry, so a
 * session never outlives its time between sweeps.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();

  constructor(
    private readonly options: { ttlSeconds: number; max: number; now: () => number },
  ) {}

  create(user: User): string {
    this.#sweep();
    for (const oldest of this.#sessions.keys()) {
      if (this.#sessions.size < this.options.max) break;
      this.#sessions.delete(oldest);
    }
    const token = randomUUID();
    this.#sessions.set(token, { user, expiresAt: this.options.now() + this.options.ttlSeconds * 1000 });
    return token;
  }

  find(token: string): User | undefined {
    const session = this.#sessions.get(token);
    if (session && session.expiresAt <= this.options.now()) {
      this.#sessions.delete(token);
      return undefined;
    }
    return session?.user;
  }

  remove(token: string): void {
    this.#sessions.delete(token);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(): void {
    const now = this.options.now();
    for (const [token, session] of this.#sessions) {
      if (session.expiresAt > now) break;
      this.#sessions.delete(token);
    }
  }
}
