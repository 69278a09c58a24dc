import { afterAll, beforeAll } from 'vitest';
import type { User } from '../../server/auth/accounts.js';
import { auth } from '../../server/services.js';
import { PostgresSessionStore } from '../../server/auth/postgresSessions.js';
import { MemorySessionStore, type Client, type SessionLimits } from '../../server/auth/sessions.js';
import type { SessionStore } from '../../server/auth/sessions.js';
import type { Database } from '../../server/db/pool.js';
import { serviceDatabase, type ServiceDatabase } from './serviceDatabase.js';

export const alice: User = { id: '1', email: 'alice@example.com', role: 'user' };
export const bob: User = { id: '2', email: 'bob@example.com', role: 'admin' };
export const client = { address: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' };
export const LIMITS: SessionLimits = { ttlSeconds: 3600, max: 100, maxPerUser: 20 };

/**
 * The login service's schema on a database of the file's own, made before its tests and dropped
 * after them; `db()` is its pool. Call once per file, at its top.
 */
export function useAuthDatabase(): () => Database {
  let database: ServiceDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await serviceDatabase(auth);
    await database.migrate();
    db = database.connect();
  });
  afterAll(() => database?.drop());
  return () => db;
}

/** A store whose sessions have their account's current credential generation, as logins do. */
export type TestStore = Omit<SessionStore, 'create'> & {
  create(user: User, client: Client): Promise<string>;
  /** The same, with what the caps ended to make room. */
  login(user: User, client: Client): ReturnType<SessionStore['create']>;
  /** A new credential generation of the account. */
  renew(userId: string): Promise<void>;
};

export function testStore(store: SessionStore): TestStore {
  return {
    create: async (user, at) =>
      (await store.create(user, at, (await store.generation(user.id))!)).token,
    login: async (user, at) => store.create(user, at, (await store.generation(user.id))!),
    renew: (userId) => store.renew(userId),
    generation: (userId) => store.generation(userId),
    find: (token) => store.find(token),
    remove: (token) => store.remove(token),
    list: (userId) => store.list(userId),
    end: (id, userId) => store.end(id, userId),
    endAllOf: (userId, except) => store.endAllOf(userId, except),
    count: () => store.count(),
  };
}

/** A PostgreSQL store, both accounts' generations stored as an instance stores them at start. */
export async function postgresStore(
  db: Database,
  limits: SessionLimits = LIMITS,
): Promise<PostgresSessionStore> {
  const store = new PostgresSessionStore(
    db,
    limits,
    [alice, bob].map(({ id, email }) => ({ id, email, password: `${email} password` })),
    2,
  );
  await store.checked();
  return store;
}

/** Each store, empty, with the limits a case asks for. */
export const storesOn = (
  db: () => Database,
): Record<'memory' | 'postgres', (limits?: Partial<SessionLimits>) => Promise<TestStore>> => ({
  memory: async (limits) => testStore(new MemorySessionStore({ ...LIMITS, ...limits })),
  postgres: async (limits) => {
    await db().query('TRUNCATE sessions');
    return testStore(await postgresStore(db(), { ...LIMITS, ...limits }));
  },
});
