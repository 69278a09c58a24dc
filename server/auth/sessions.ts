import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { unauthorized } from '../shared/errors.js';
import type { User } from './accounts.js';
import { cookieValues, setCookie, type CookieOptions } from './cookies.js';
import { messages } from './messages.js';

interface Session {
  user: User;
  expiresAt: number;
}

export interface SessionLimits {
  ttlSeconds: number;
  /** Sessions held at most, all accounts together; past it the oldest ends. */
  max: number;
  /** Sessions one account holds at most; past it the account's oldest ends, never another account's. */
  maxPerUser: number;
}

/**
 * The in-memory session table, token → user. Every session lives `ttlSeconds`, so the Map's
 * insertion order is also expiry order: expired sessions are swept from its head at each login,
 * and when `max` sessions exist the oldest is evicted first. Each account's tokens are kept in
 * order too, for its own cap. Lookups also check expiry, so a session never outlives its time
 * between sweeps.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #byUser = new Map<string, Set<string>>();

  constructor(private readonly options: SessionLimits & { now: () => number }) {}

  create(user: User): string {
    this.#sweep();
    const own = this.#byUser.get(user.id) ?? new Set<string>();
    for (const oldest of own) {
      if (own.size < this.options.maxPerUser) break;
      this.remove(oldest);
    }
    for (const oldest of this.#sessions.keys()) {
      if (this.#sessions.size < this.options.max) break;
      this.remove(oldest);
    }
    const token = randomUUID();
    this.#sessions.set(token, { user, expiresAt: this.options.now() + this.options.ttlSeconds * 1000 });
    this.#byUser.set(user.id, own.add(token));
    return token;
  }

  find(token: string): User | undefined {
    const session = this.#sessions.get(token);
    if (session && session.expiresAt <= this.options.now()) {
      this.remove(token);
      return undefined;
    }
    return session?.user;
  }

  remove(token: string): void {
    const session = this.#sessions.get(token);
    if (!session) return;
    this.#sessions.delete(token);
    const own = this.#byUser.get(session.user.id)!;
    own.delete(token);
    if (own.size === 0) this.#byUser.delete(session.user.id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(): void {
    const now = this.options.now();
    for (const [token, session] of this.#sessions) {
      if (session.expiresAt > now) break;
      this.remove(token);
    }
  }
}

const TOKEN = 'token';

export function setSessionCookie(ctx: Context, token: string, options: CookieOptions): void {
  setCookie(ctx, TOKEN, token, options);
}

export function deleteSessionCookie(ctx: Context, { secure }: Pick<CookieOptions, 'secure'>): void {
  setCookie(ctx, TOKEN, '', { maxAgeSeconds: 0, secure });
}

/** Every `token` cookie the request carries (see cookieValues). */
export const sessionTokens = (ctx: Context) => cookieValues(ctx, TOKEN);

/** The user of the first token that names a live session. */
export function signedInUser(ctx: Context, sessions: SessionStore): User | undefined {
  for (const token of sessionTokens(ctx)) {
    const user = sessions.find(token);
    if (user) return user;
  }
  return undefined;
}

/** For the API: 401 `unauthenticated` without a token, 401 `invalid session` when no token names a live session. */
export function requireUser(ctx: Context, sessions: SessionStore): User {
  const user = signedInUser(ctx, sessions);
  if (user) return user;
  throw unauthorized(sessionTokens(ctx).length === 0 ? messages.unauthenticated : messages.invalidSession);
}
