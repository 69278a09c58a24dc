import { randomUUID } from 'node:crypto';
import type { User } from './accounts.js';

/** Past `maxPerUser` the account's own oldest session ends, past `max` the oldest of all. */
export type SessionLimits = { ttlSeconds: number; max: number; maxPerUser: number };
export type Client = { address: string; userAgent: string };
export type SessionRef = { id: string; userId: string };
type Times<T> = Record<'createdAt' | 'lastSeenAt' | 'expiresAt', T>;
/** A live session as lists show it: never its token. */
export type SessionInfo = SessionRef & Client & Times<string>;
export type Capped = { userId: string; cap: 'SESSION_MAX_PER_USER' | 'SESSION_MAX'; ended: number };
type Created = { token: string; capped: Capped[] };
/** A session's fields as either store keeps them. */
export type StoredSession = SessionRef & Client & Times<number | Date>;

const iso = (time: number | Date) => new Date(time).toISOString();
/** A session as either store lists it, its times as toISOString writes them. */
export const sessionInfo = (session: StoredSession): SessionInfo => ({
  id: session.id,
  userId: session.userId,
  address: session.address,
  userAgent: session.userAgent,
  createdAt: iso(session.createdAt),
  lastSeenAt: iso(session.lastSeenAt),
  expiresAt: iso(session.expiresAt),
});

/**
 * The client holds a token; lists and endings name a session by its id. Every session is made with
 * its account's credential generation, which an administrator ending every session replaces, as
 * does a change of the account's email or password: only sessions of the current one are live.
 */
export interface SessionStore {
  /** A new session within the caps, and how many live sessions each cap ended per account. */
  create(user: User, client: Client, generation: number): Promise<Created>;
  find(token: string): Promise<SessionRef | undefined>;
  remove(token: string): Promise<SessionRef | undefined>;
  /** Oldest first. */
  list(userId?: string): Promise<SessionInfo[]>;
  end(id: string, userId?: string): Promise<SessionRef | undefined>;
  endAllOf(userId: string, except?: string): Promise<number>;
  count(): Promise<number>;
  /** Undefined when another instance replaced this one's credential for the account. */
  generation(userId: string): Promise<number | undefined>;
  renew(userId: string): Promise<void>;
}

type Session = SessionRef & Client & Times<number> & { token: string; generation: number };
type Sessions = Set<Session> | Map<string, Session>;

const refOf = ({ id, userId }: Session): SessionRef => ({ id, userId });

/**
 * token → session, in this process. Every session lives `ttlSeconds`, so the Map's insertion
 * order is also expiry order: the expired are swept from its head, the oldest evicted first.
 * Generations live here too: a restart ends every session and device key anyway.
 */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, Session>();
  /** Each configured account's sessions, oldest first, for its own cap. */
  readonly #byUser = new Map<string, Set<Session>>();
  readonly #generations = new Map<string, number>();

  constructor(private readonly limits: SessionLimits) {}

  async create({ id: userId }: User, { address, userAgent }: Client, generation: number) {
    this.#sweep();
    const capped: Capped[] = [];
    const endOldest = (of: Sessions, most: number, cap: Capped['cap']) => {
      for (const oldest of of.values()) {
        if (of.size < most) return;
        this.#delete(oldest);
        const count = capped.find((c) => c.cap === cap && c.userId === oldest.userId);
        if (count) count.ended++;
        else capped.push({ userId: oldest.userId, cap, ended: 1 });
      }
    };
    const own = this.#byUser.get(userId) ?? new Set<Session>();
    endOldest(own, this.limits.maxPerUser, 'SESSION_MAX_PER_USER');
    endOldest(this.#sessions, this.limits.max, 'SESSION_MAX');
    const [token, id, now] = [randomUUID(), randomUUID(), Date.now()];
    const expiresAt = now + this.limits.ttlSeconds * 1000;
    const times = { createdAt: now, lastSeenAt: now, expiresAt };
    const session = { token, id, userId, address, userAgent, generation, ...times };
    this.#sessions.set(token, session);
    this.#byUser.set(userId, own.add(session));
    return { token, capped };
  }

  async find(token: string) {
    const session = this.#live(token);
    if (session) session.lastSeenAt = Date.now();
    return session && refOf(session);
  }

  async remove(token: string) {
    const session = this.#live(token);
    return session && refOf(this.#delete(session));
  }

  async list(userId?: string) {
    this.#sweep();
    return this.#of(userId).filter(this.#isLive).map(sessionInfo);
  }

  async end(id: string, userId?: string) {
    const session = this.#of(userId).find((session) => session.id === id);
    return session && refOf(this.#delete(session));
  }

  async endAllOf(userId: string, except?: string) {
    const ended = this.#of(userId).filter((session) => session.id !== except);
    ended.forEach((session) => this.#delete(session));
    return ended.length;
  }

  async count() {
    return this.#of().filter(this.#isLive).length;
  }

  async generation(userId: string) {
    return this.#generations.get(userId) ?? 1;
  }

  async renew(userId: string) {
    this.#generations.set(userId, (await this.generation(userId)) + 1);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #of(userId?: string): Session[] {
    return [...(userId === undefined ? this.#sessions.values() : (this.#byUser.get(userId) ?? []))];
  }

  #isLive = ({ expiresAt, generation, userId }: Session) =>
    expiresAt > Date.now() && generation === (this.#generations.get(userId) ?? 1);

  /** The token's session while it is live; one that no longer is, deleted. */
  #live(token: string): Session | undefined {
    const session = this.#sessions.get(token);
    if (session && this.#isLive(session)) return session;
    if (session) this.#delete(session);
  }

  #delete(session: Session): Session {
    this.#sessions.delete(session.token);
    this.#byUser.get(session.userId)!.delete(session);
    return session;
  }

  #sweep(): void {
    for (const session of this.#sessions.values()) {
      if (session.expiresAt > Date.now()) return;
      this.#delete(session);
    }
  }
}
