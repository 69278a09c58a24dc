import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { forbidden, unauthorized } from '../http/errors.js';
import type { Accounts, User } from './accounts.js';
import { cookie, cookieValues, type CookieOptions } from './cookies.js';
import { messages } from './messages.js';

export interface SessionLimits {
  ttlSeconds: number;
  /** Sessions held at most, all accounts together; past it the oldest ends. */
  max: number;
  /**
   * Sessions one account holds at most; past it the account's oldest ends, never another account's.
   */
  maxPerUser: number;
}

/** Who opened a session, as an administrator sees it. */
export interface Client {
  address: string;
  userAgent: string;
}

/** A live session as administrators and its owner see it: never its token. */
export interface SessionInfo extends Client {
  id: string;
  userId: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

/** A session that was ended: its id and its account. */
export interface EndedSession {
  id: string;
  userId: string;
}

/**
 * The cap that ended sessions at a login: SESSION_MAX_PER_USER (the account's own) or SESSION_MAX
 * (all accounts together).
 */
export type SessionCap = 'SESSION_MAX_PER_USER' | 'SESSION_MAX';

/** How many live sessions of an account a cap ended. */
export interface CappedSessions {
  userId: string;
  cap: SessionCap;
  ended: number;
}

/**
 * The session table. The client holds a token; the table knows each session by an id of its own,
 * which is what lists show and what ends a session from elsewhere. Every operation takes effect
 * at once for every reader (no cache outlives an ending).
 */
export interface SessionStore {
  /**
   * Starts a session for `user`, made with the account's credential generation `generation`, within
   * the caps: its token, and the live sessions the caps ended to make room.
   */
  create(
    user: User,
    client: Client,
    generation: number,
  ): Promise<{ token: string; capped: CappedSessions[] }>;
  /** The live session a token names, if it is of the account's current credential generation. */
  find(token: string): Promise<{ id: string; userId: string } | undefined>;
  /** Ends the session a token names, if any: the session, when it was live. */
  remove(token: string): Promise<EndedSession | undefined>;
  /**
   * Every live session (of its account's current generation), or those of one account, oldest
   * first.
   */
  list(userId?: string): Promise<SessionInfo[]>;
  /**
   * Ends the session with this id (when given, only if it is `userId`'s): the session, if there was
   * one.
   */
  end(id: string, userId?: string): Promise<EndedSession | undefined>;
  /** Ends every session of an account but `except`; how many. */
  endAllOf(userId: string, except?: string): Promise<number>;
  /** How many sessions are live (those `list()` lists). */
  count(): Promise<number>;
}

/** The sessions each cap ended, one entry per account and cap. */
export function cappedSessions(endings: { userId: string; cap: SessionCap }[]): CappedSessions[] {
  const counted = new Map<string, CappedSessions>();
  for (const { userId, cap } of endings) {
    const key = `${cap} ${userId}`;
    const known = counted.get(key);
    if (known) known.ended++;
    else counted.set(key, { userId, cap, ended: 1 });
  }
  return [...counted.values()];
}

/**
 * A session as the memory store keeps it: when it was last seen as a number, made a date only for
 * the lists that show it.
 */
interface Session extends Omit<SessionInfo, 'lastSeenAt'> {
  lastSeenAtMs: number;
  expiresAtMs: number;
  generation: number;
}

/**
 * The spec's in-memory session table, token → session: a restart ends every session. Every
 * session lives `ttlSeconds`, so the Map's insertion order is also expiry order: expired sessions
 * are swept from its head at each login, and when `max` sessions exist the oldest is evicted
 * first. Each account's tokens are kept in order too, for its own cap. Lookups also check expiry
 * and the account's credential generation (`generationOf`), so a session never outlives its time
 * between sweeps, nor its generation.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #byUser = new Map<string, Set<string>>();

  constructor(
    private readonly options: SessionLimits & {
      generationOf: (userId: string) => number;
    },
  ) {}

  async create(user: User, client: Client, generation: number) {
    this.#sweep();
    const endings: { userId: string; cap: SessionCap }[] = [];
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
    const at = new Date(now).toISOString();
    const expiresAtMs = now + this.options.ttlSeconds * 1000;
    this.#sessions.set(token, {
      id: randomUUID(),
      userId: user.id,
      ...client,
      createdAt: at,
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
    if (!session) return undefined;
    session.lastSeenAtMs = Date.now();
    return { id: session.id, userId: session.userId };
  }

  async remove(token: string): Promise<EndedSession | undefined> {
    const session = this.#live(token);
    this.#delete(token);
    return session && { id: session.id, userId: session.userId };
  }

  async list(userId?: string): Promise<SessionInfo[]> {
    this.#sweep();
    const tokens = userId === undefined ? this.#sessions.keys() : (this.#byUser.get(userId) ?? []);
    return [...tokens].flatMap((token) => {
      const {
        expiresAtMs: _expires,
        lastSeenAtMs,
        generation,
        ...info
      } = this.#sessions.get(token)!;
      return generation === this.options.generationOf(info.userId)
        ? [{ ...info, lastSeenAt: new Date(lastSeenAtMs).toISOString() }]
        : [];
    });
  }

  async end(id: string, userId?: string): Promise<EndedSession | undefined> {
    const candidates =
      userId === undefined ? this.#sessions.keys() : (this.#byUser.get(userId) ?? []);
    const token = [...candidates].find((candidate) => this.#sessions.get(candidate)!.id === id);
    const session = token === undefined ? undefined : this.#delete(token);
    return session && { id: session.id, userId: session.userId };
  }

  async endAllOf(userId: string, except?: string): Promise<number> {
    const tokens = [...(this.#byUser.get(userId) ?? [])].filter(
      (token) => this.#sessions.get(token)?.id !== except,
    );
    tokens.forEach((token) => this.#delete(token));
    return tokens.length;
  }

  async count(): Promise<number> {
    this.#sweep();
    let live = 0;
    for (const { userId, generation } of this.#sessions.values())
      if (generation === this.options.generationOf(userId)) live++;
    return live;
  }

  get size(): number {
    return this.#sessions.size;
  }

  #live(token: string): Session | undefined {
    const session = this.#sessions.get(token);
    if (
      session &&
      (session.expiresAtMs <= Date.now() ||
        session.generation !== this.options.generationOf(session.userId))
    ) {
      this.#delete(token);
      return undefined;
    }
    return session;
  }

  /** Deletes the session of `token`, if any: the session it was. */
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

/**
 * A browser's name as sessions and security events keep it, for its owner and administrators to
 * recognize it; longer ones are cut.
 */
const USER_AGENT_CHARS = 256;

/**
 * Who sent the request: the client's address (`ctx.ip`) and its browser. A longer browser name is
 * cut, and copied: a slice could keep the whole header (up to 16 KiB) in memory for as long as the
 * session or event that holds it. Header text is Latin-1, so the copy is exact.
 */
export function clientOf(ctx: Context): Client {
  const userAgent = ctx.get('user-agent');
  return {
    address: ctx.ip,
    userAgent:
      userAgent.length <= USER_AGENT_CHARS
        ? userAgent
        : Buffer.from(userAgent.slice(0, USER_AGENT_CHARS), 'latin1').toString('latin1'),
  };
}

/** The `Set-Cookie` value that gives the browser its session token. */
export const sessionCookie = (token: string, options: CookieOptions) =>
  cookie(TOKEN, token, options);

/** The `Set-Cookie` value that deletes the session cookie. */
export const deletedSessionCookie = ({ secure }: Pick<CookieOptions, 'secure'>) =>
  cookie(TOKEN, '', { maxAgeSeconds: 0, secure });

/** Every `token` cookie the request carries (see cookieValues). */
export const sessionTokens = (ctx: Context) => cookieValues(ctx, TOKEN);

/** The request's signed-in user and the session it came with. */
export interface SignedIn {
  user: User;
  sessionId: string;
}

/** Who signed in, checked on the server, or undefined. */
export type SignedInCheck = (ctx: Context) => Promise<SignedIn | undefined>;

/** The first of the request's tokens that names a live session of a known account. */
export function signedInWith(sessions: SessionStore, accounts: Accounts): SignedInCheck {
  return async (ctx) => {
    for (const token of sessionTokens(ctx)) {
      const session = await sessions.find(token);
      const user = session && accounts.byId(session.userId);
      if (user) {
        // For the request line: who asked.
        ctx.state.userId = user.id;
        return { user, sessionId: session.id };
      }
    }
    return undefined;
  };
}

/**
 * For the API: 401 `unauthenticated` without a token, 401 `invalid session` when no token names a
 * live session.
 */
export async function requireSignedIn(ctx: Context, signedIn: SignedInCheck): Promise<SignedIn> {
  const found = await signedIn(ctx);
  if (found) return found;
  throw unauthorized(
    sessionTokens(ctx).length === 0 ? messages.unauthenticated : messages.invalidSession,
  );
}

/**
 * For administrators' operations: the role is checked on the server at every request (403 for role
 * `user`).
 */
export async function requireAdmin(ctx: Context, signedIn: SignedInCheck): Promise<SignedIn> {
  const found = await requireSignedIn(ctx, signedIn);
  if (found.user.role !== 'admin') throw forbidden(messages.forbidden);
  return found;
}
