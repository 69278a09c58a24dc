import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { forbidden, unauthorized } from '../http/errors.js';
import type { Accounts, User } from './accounts.js';
import { cookie, cookieValues, type CookieOptions } from './cookies.js';
import { messages } from './messages.js';

/** Past `maxPerUser` the account's own oldest session ends, past `max` the oldest of all. */
export interface SessionLimits {
  ttlSeconds: number;
  max: number;
  maxPerUser: number;
}

export interface Client {
  address: string;
  userAgent: string;
}

/** A live session as lists show it: never its token. */
export interface SessionInfo extends Client {
  id: string;
  userId: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

export type SessionRef = Pick<SessionInfo, 'id' | 'userId'>;
export type SessionCap = 'SESSION_MAX_PER_USER' | 'SESSION_MAX';
type Ending = { userId: string; cap: SessionCap };

/**
 * The client holds a token; lists and endings name a session by its id. Only sessions of the
 * account's current credential generation are live.
 */
export interface SessionStore {
  /** A new session within the caps, and how many live sessions each cap ended per account. */
  create(
    user: User,
    client: Client,
    generation: number,
  ): Promise<{ token: string; capped: (Ending & { ended: number })[] }>;
  find(token: string): Promise<SessionRef | undefined>;
  remove(token: string): Promise<SessionRef | undefined>;
  /** Oldest first. */
  list(userId?: string): Promise<SessionInfo[]>;
  end(id: string, userId?: string): Promise<SessionRef | undefined>;
  endAllOf(userId: string, except?: string): Promise<number>;
  count(): Promise<number>;
}

export function cappedSessions(endings: Ending[]) {
  const counted = new Map<string, Ending & { ended: number }>();
  for (const { userId, cap } of endings) {
    const known = counted.get(`${cap} ${userId}`);
    if (known) known.ended++;
    else counted.set(`${cap} ${userId}`, { userId, cap, ended: 1 });
  }
  return [...counted.values()];
}

const refOf = ({ id, userId }: SessionRef): SessionRef => ({ id, userId });

interface Session extends Omit<SessionInfo, 'lastSeenAt'> {
  lastSeenAtMs: number;
  expiresAtMs: number;
  generation: number;
}

/**
 * token → session, in this process. Every session lives `ttlSeconds`, so the Map's insertion
 * order is also expiry order: the expired are swept from its head, the oldest evicted first.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Session>();
  /** Each account's tokens, oldest first, for its own cap. */
  readonly #byUser = new Map<string, Set<string>>();

  constructor(
    private readonly options: SessionLimits & { generationOf: (userId: string) => number },
  ) {}

  async create(user: User, client: Client, generation: number) {
    this.#sweep();
    const endings: Ending[] = [];
    const own = this.#byUser.get(user.id) ?? new Set<string>();
    for (const oldest of own) {
      if (own.size < this.options.maxPerUser) break;
      endings.push({ userId: this.#delete(oldest)!.userId, cap: 'SESSION_MAX_PER_USER' });
    }
    for (const oldest of this.#sessions.keys()) {
      if (this.#sessions.size < this.options.max) break;
      endings.push({ userId: this.#delete(oldest)!.userId, cap: 'SESSION_MAX' });
    }
    const token = randomUUID();
    const now = Date.now();
    const expiresAtMs = now + this.options.ttlSeconds * 1000;
    this.#sessions.set(token, {
      id: randomUUID(),
      userId: user.id,
      ...client,
      createdAt: new Date(now).toISOString(),
      lastSeenAtMs: now,
      expiresAt: new Date(expiresAtMs).toISOString(),
      expiresAtMs,
      generation,
    });
    this.#byUser.set(user.id, own.add(token));
    return { token, capped: cappedSessions(endings) };
  }

  async find(token: string) {
    const session = this.#live(token);
    if (session) session.lastSeenAtMs = Date.now();
    return session && refOf(session);
  }

  async remove(token: string) {
    const session = this.#live(token);
    this.#delete(token);
    return session && refOf(session);
  }

  async list(userId?: string): Promise<SessionInfo[]> {
    this.#sweep();
    return [...this.#tokens(userId)].flatMap((token) => {
      const session = this.#sessions.get(token)!;
      const { expiresAtMs: _, lastSeenAtMs, generation: __, ...info } = session;
      return this.#isLive(session)
        ? [{ ...info, lastSeenAt: new Date(lastSeenAtMs).toISOString() }]
        : [];
    });
  }

  async end(id: string, userId?: string) {
    const token = [...this.#tokens(userId)].find((token) => this.#sessions.get(token)!.id === id);
    const session = token === undefined ? undefined : this.#delete(token);
    return session && refOf(session);
  }

  async endAllOf(userId: string, except?: string) {
    const tokens = [...this.#tokens(userId)].filter(
      (token) => this.#sessions.get(token)!.id !== except,
    );
    tokens.forEach((token) => this.#delete(token));
    return tokens.length;
  }

  async count() {
    return [...this.#sessions.values()].filter((session) => this.#isLive(session)).length;
  }

  get size(): number {
    return this.#sessions.size;
  }

  #tokens(userId?: string): Iterable<string> {
    return userId === undefined ? this.#sessions.keys() : (this.#byUser.get(userId) ?? []);
  }

  #isLive({ expiresAtMs, generation, userId }: Session): boolean {
    return expiresAtMs > Date.now() && generation === this.options.generationOf(userId);
  }

  #live(token: string): Session | undefined {
    const session = this.#sessions.get(token);
    if (session && this.#isLive(session)) return session;
    this.#delete(token);
    return undefined;
  }

  #delete(token: string): Session | undefined {
    const session = this.#sessions.get(token);
    if (!session) return undefined;
    this.#sessions.delete(token);
    const own = this.#byUser.get(session.userId)!;
    own.delete(token);
    if (own.size === 0) this.#byUser.delete(session.userId);
    return session;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [token, session] of this.#sessions) {
      if (session.expiresAtMs > now) break;
      this.#delete(token);
    }
  }
}

const TOKEN = 'token';

export const sessionCookie = (token: string, options: CookieOptions) =>
  cookie(TOKEN, token, options);

export const deletedSessionCookie = ({ secure }: Pick<CookieOptions, 'secure'>) =>
  cookie(TOKEN, '', { maxAgeSeconds: 0, secure });

export const sessionTokens = (ctx: Context) => cookieValues(ctx, TOKEN);

export interface SignedIn {
  user: User;
  sessionId: string;
}

export type SignedInCheck = (ctx: Context) => Promise<SignedIn | undefined>;

/** The first of the request's tokens that names a live session of a known account. */
export function signedInWith(sessions: SessionStore, accounts: Accounts): SignedInCheck {
  return async (ctx) => {
    for (const token of sessionTokens(ctx)) {
      const session = await sessions.find(token);
      const user = session && accounts.byId(session.userId);
      if (user) {
        ctx.state.userId = user.id; // for the request's log line
        return { user, sessionId: session.id };
      }
    }
    return undefined;
  };
}

export async function requireSignedIn(ctx: Context, signedIn: SignedInCheck): Promise<SignedIn> {
  const found = await signedIn(ctx);
  if (found) return found;
  throw unauthorized(
    sessionTokens(ctx).length === 0 ? messages.unauthenticated : messages.invalidSession,
  );
}

/** The role is checked on the server at every request. */
export async function requireAdmin(ctx: Context, signedIn: SignedInCheck): Promise<SignedIn> {
  const found = await requireSignedIn(ctx, signedIn);
  if (found.user.role !== 'admin') throw forbidden(messages.forbidden);
  return found;
}
