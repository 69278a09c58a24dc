import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { unauthorized } from '../shared/errors.js';
import type { User } from './accounts.js';
import { messages } from './messages.js';

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

  constructor(private readonly options: { ttlSeconds: number; max: number; now: () => number }) {}

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

const COOKIE = 'token';

export interface CookieOptions {
  maxAgeSeconds: number;
  secure: boolean;
}

/**
 * The session cookie, written by hand rather than with ctx.cookies: that would add an Expires
 * attribute the spec does not list, and refuse `Secure` when TLS ends at a proxy in front.
 */
function cookie(value: string, { maxAgeSeconds, secure }: CookieOptions): string {
  return `${COOKIE}=${value}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function setSessionCookie(ctx: Context, token: string, options: CookieOptions): void {
  ctx.append('Set-Cookie', cookie(token, options));
}

export function deleteSessionCookie(ctx: Context, { secure }: Pick<CookieOptions, 'secure'>): void {
  ctx.append('Set-Cookie', cookie('', { maxAgeSeconds: 0, secure }));
}

/**
 * Every non-empty `token` cookie the request carries, in order. A browser sends several when
 * cookies of that name were set for several paths or domains, so one planted by a sibling
 * site cannot hide the real one: each is tried.
 */
export function sessionTokens(ctx: Context): string[] {
  const header = ctx.req.headers.cookie;
  if (!header) return [];
  const tokens: string[] = [];
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator === -1 || pair.slice(0, separator).trim() !== COOKIE) continue;
    const value = pair.slice(separator + 1).trim();
    if (value) tokens.push(value);
  }
  return tokens;
}

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
