import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { User } from '../server/auth/accounts.js';
import { auth } from '../server/services.js';
import { PostgresSessionStore } from '../server/auth/postgresSessions.js';
import {
  MemorySessionStore,
  type Client,
  type SessionLimits,
  type SessionStore,
} from '../server/auth/sessions.js';
import type { Database } from '../server/db/pool.js';
import { serviceDatabase, type ServiceDatabase } from './support/serviceDatabase.js';

const alice: User = { id: '1', email: 'alice@example.com', role: 'user' };
const bob: User = { id: '2', email: 'bob@example.com', role: 'admin' };
const client = { address: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' };
const LIMITS: SessionLimits = { ttlSeconds: 3600, max: 100, maxPerUser: 20 };

let database: ServiceDatabase;
let db: Database;

beforeAll(async () => {
  database = await serviceDatabase(auth);
  await database.migrate();
  db = database.connect();
});
afterAll(() => database?.drop());

/**
 * A store whose sessions are made with their account's current credential generation, as a login
 * makes them.
 */
type TestStore = Omit<SessionStore, 'create'> & {
  create(user: User, client: Client): Promise<string>;
  /** The same, with what the caps ended to make room. */
  login(user: User, client: Client): ReturnType<SessionStore['create']>;
  /** A new credential generation of the account. */
  renew(userId: string): Promise<void>;
};

function testStore(store: SessionStore): TestStore {
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

/**
 * A PostgreSQL store with the generations of the two accounts stored as an instance stores them at
 * its start.
 */
async function postgresStore(limits: SessionLimits = LIMITS): Promise<PostgresSessionStore> {
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
const stores: Record<string, (limits?: Partial<SessionLimits>) => Promise<TestStore>> = {
  memory: async (limits) => testStore(new MemorySessionStore({ ...LIMITS, ...limits })),
  postgres: async (limits) => {
    await db.query('TRUNCATE sessions');
    return testStore(await postgresStore({ ...LIMITS, ...limits }));
  },
};

const idOf = async (store: TestStore, token: string) => (await store.find(token))!.id;

/** What every session store promises, whichever keeps the sessions. */
const contract: [
  string,
  (make: (limits?: Partial<SessionLimits>) => Promise<TestStore>) => Promise<void>,
][] = [
  [
    'a token names its session until it is removed; an unknown token names none',
    async (make) => {
      const store = await make();
      const token = await store.create(alice, client);
      expect(await store.find(token)).toEqual({ id: expect.any(String), userId: alice.id });
      await store.remove(token);
      expect(await store.find(token)).toBeUndefined();
      expect(await store.find(randomUUID())).toBeUndefined();
      expect(await store.find('not a token')).toBeUndefined();
    },
  ],
  [
    'a removal names the live session it ended, and none for a token that names none',
    async (make) => {
      const store = await make();
      const token = await store.create(alice, client);
      const id = await idOf(store, token);
      expect(await store.remove(token)).toEqual({ id, userId: alice.id });
      expect(await store.remove(token)).toBeUndefined();
      expect(await store.remove(randomUUID())).toBeUndefined();
    },
  ],
  [
    'names the live sessions each cap ended at a login, by account and cap',
    async (make) => {
      const store = await make({ max: 3, maxPerUser: 2 });
      const capped = [];
      for (const user of [alice, alice, alice, bob, bob])
        capped.push((await store.login(user, client)).capped);
      expect(capped).toEqual([
        [],
        [],
        [{ userId: alice.id, cap: 'SESSION_MAX_PER_USER', ended: 1 }],
        [],
        [{ userId: alice.id, cap: 'SESSION_MAX', ended: 1 }],
      ]);
    },
  ],
  [
    'lookups sent at once each name their own session, however many, repeated, ended or unknown',
    async (make) => {
      const store = await make();
      const [aliceToken, bobToken, ended] = [
        await store.create(alice, client),
        await store.create(bob, client),
        await store.create(alice, client),
      ];
      await store.remove(ended);
      const [aliceId, bobId] = [await idOf(store, aliceToken), await idOf(store, bobToken)];
      const expected = new Map<string, unknown>([
        [aliceToken, { id: aliceId, userId: alice.id }],
        [bobToken, { id: bobId, userId: bob.id }],
        [ended, undefined],
      ]);
      const tokens = Array.from(
        { length: 600 },
        (_, i) => [aliceToken, bobToken, ended, randomUUID()][i % 4]!,
      );
      const found = await Promise.all(tokens.map((token) => store.find(token)));
      expect(found).toEqual(tokens.map((token) => expected.get(token)));
    },
  ],
  [
    "lists live sessions oldest first, each account's " +
      'on demand, with who opened them and never a token',
    async (make) => {
      const store = await make();
      const tokens = [
        await store.create(alice, client),
        await store.create(bob, { address: '198.51.100.2', userAgent: 'curl/8' }),
        await store.create(alice, client),
      ];
      const ids = await Promise.all(tokens.map((token) => idOf(store, token)));
      const all = await store.list();
      expect(all.map((session) => session.id)).toEqual(ids);
      expect(all[1]).toEqual({
        id: ids[1],
        userId: bob.id,
        address: '198.51.100.2',
        userAgent: 'curl/8',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        lastSeenAt: expect.any(String),
        expiresAt: expect.any(String),
      });
      expect(Date.parse(all[1]!.expiresAt) - Date.parse(all[1]!.createdAt)).toBeCloseTo(
        3600_000,
        -2,
      );
      expect((await store.list(alice.id)).map((session) => session.id)).toEqual([ids[0], ids[2]]);
      expect(await store.list('no such account')).toEqual([]);
      for (const token of tokens) expect(JSON.stringify(all)).not.toContain(token);
    },
  ],
  [
    "ends a session by its id, and only the owner's when an owner is named",
    async (make) => {
      const store = await make();
      const aliceToken = await store.create(alice, client);
      const bobToken = await store.create(bob, client);
      const bobId = await idOf(store, bobToken);
      expect(await store.end(bobId, alice.id)).toBeUndefined();
      expect(await store.find(bobToken)).toBeDefined();
      expect(await store.end(bobId)).toEqual({ id: bobId, userId: bob.id });
      expect(await store.find(bobToken)).toBeUndefined();
      expect(await store.end(bobId)).toBeUndefined();
      expect(await store.end(randomUUID())).toBeUndefined();
      expect(await store.end("1' OR '1'='1")).toBeUndefined();
      const aliceId = await idOf(store, aliceToken);
      expect(await store.end(aliceId, alice.id)).toEqual({ id: aliceId, userId: alice.id });
    },
  ],
  [
    "ends every session of an account but the one kept, and no other account's",
    async (make) => {
      const store = await make();
      const kept = await store.create(alice, client);
      const others = [await store.create(alice, client), await store.create(alice, client)];
      const bobs = await store.create(bob, client);
      expect(await store.endAllOf(alice.id, await idOf(store, kept))).toBe(2);
      for (const token of others) expect(await store.find(token)).toBeUndefined();
      expect(await store.find(kept)).toBeDefined();
      expect(await store.find(bobs)).toBeDefined();
      expect(await store.endAllOf(alice.id)).toBe(1);
      expect(await store.list()).toHaveLength(1);
    },
  ],
  [
    "keeps at most maxPerUser sessions per account, ending that account's oldest, never another's",
    async (make) => {
      const store = await make({ maxPerUser: 3 });
      const bobs = await store.create(bob, client);
      const tokens: string[] = [];
      for (let login = 0; login < 5; login++) tokens.push(await store.create(alice, client));
      expect(
        await Promise.all(tokens.map(async (token) => (await store.find(token)) !== undefined)),
      ).toEqual([false, false, true, true, true]);
      expect(await store.find(bobs)).toBeDefined();
    },
  ],
  [
    'keeps at most max sessions, ending the oldest first',
    async (make) => {
      const store = await make({ max: 3 });
      const tokens: string[] = [];
      for (let login = 0; login < 5; login++)
        tokens.push(await store.create(login % 2 ? bob : alice, client));
      expect(
        await Promise.all(tokens.map(async (token) => (await store.find(token)) !== undefined)),
      ).toEqual([false, false, true, true, true]);
      expect(await store.list()).toHaveLength(3);
    },
  ],
  [
    'holds both caps for logins arriving together',
    async (make) => {
      const store = await make({ max: 6, maxPerUser: 4 });
      await Promise.all(
        Array.from({ length: 24 }, (_, login) => store.create(login % 3 ? alice : bob, client)),
      );
      const all = await store.list();
      expect(all.length).toBeLessThanOrEqual(6);
      expect(all.filter((session) => session.userId === alice.id).length).toBeLessThanOrEqual(4);
      expect(all.filter((session) => session.userId === bob.id).length).toBeLessThanOrEqual(4);
    },
  ],
  [
    'refuses, no longer lists and no longer counts a session past its lifetime',
    async (make) => {
      const store = await make({ ttlSeconds: 1 });
      const token = await store.create(alice, client);
      expect(await store.find(token)).toBeDefined();
      expect(await store.count()).toBe(1);
      await sleep(1_100);
      expect(await store.count()).toBe(0);
      expect(await store.find(token)).toBeUndefined();
      expect(await store.list()).toEqual([]);
    },
  ],
  [
    "refuses, no longer lists and no longer counts an account's sessions " +
      "made before its credential generation changed, and no other account's",
    async (make) => {
      const store = await make();
      const [before, bobs] = [await store.create(alice, client), await store.create(bob, client)];
      await store.renew(alice.id);
      const after = await store.create(alice, client);
      expect(await store.count()).toBe(2);
      expect(await store.find(before)).toBeUndefined();
      expect(await store.find(after)).toBeDefined();
      expect(await store.find(bobs)).toBeDefined();
      expect((await store.list()).map((session) => session.userId).sort()).toEqual([
        alice.id,
        bob.id,
      ]);
    },
  ],
];

for (const [name, make] of Object.entries(stores)) {
  describe(`the ${name} session store`, () => {
    for (const [promise, check] of contract) it(promise, () => check(make));
  });
}

describe('the PostgreSQL session store', () => {
  it('keeps only the SHA-256 of each token: the table yields no usable token', async () => {
    const store = await stores.postgres!();
    const token = await store.create(alice, client);
    const { rows } = await db.query('SELECT * FROM sessions');
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0].token_hash).toEqual(createHash('sha256').update(token).digest());
  });

  it('refreshes the last-seen time of a session used after a minute, only that one', async () => {
    const store = await stores.postgres!();
    const used = await store.create(alice, client);
    await store.create(bob, client);
    await db.query("UPDATE sessions SET last_seen_at = now() - interval '2 minutes'");
    const lastSeen = async () =>
      new Map(
        (await store.list()).map((session) => [
          session.userId,
          Date.now() - Date.parse(session.lastSeenAt),
        ]),
      );
    expect(await store.find(used)).toBeDefined();
    await vi.waitFor(async () => expect((await lastSeen()).get(alice.id)).toBeLessThan(10_000));
    expect((await lastSeen()).get(bob.id)).toBeGreaterThan(110_000);
  });

  it('deletes expired rows when swept, and only those', async () => {
    const [short, long] = [
      await postgresStore({ ...LIMITS, ttlSeconds: 1 }),
      await postgresStore(),
    ];
    await db.query('TRUNCATE sessions');
    await short.create(alice, client, (await short.generation(alice.id))!);
    const { token: live } = await long.create(bob, client, (await long.generation(bob.id))!);
    await sleep(1_100);
    expect(await short.sweep()).toBe(1);
    expect(await short.sweep()).toBe(0);
    expect((await db.query('SELECT count(*)::int AS count FROM sessions')).rows[0].count).toBe(1);
    expect(await short.find(live)).toBeDefined();
  });
});

describe('credential generations in PostgreSQL', () => {
  const credentials = (password: string, email = alice.email) => [
    { id: alice.id, email, password },
  ];
  /** An instance's store, with its credentials as it starts. */
  const instance = (own: ReturnType<typeof credentials>) =>
    new PostgresSessionStore(db, LIMITS, own, 2);

  it(
    'keeps the generation across a start with the same email ' +
      'and password, in whatever letter case the email comes',
    async () => {
      await db.query('TRUNCATE credentials, sessions');
      const first = instance(credentials('first password'));
      const generation = await first.generation(alice.id);
      const again = instance(credentials('first password', alice.email.toUpperCase()));
      expect(await again.generation(alice.id)).toBe(generation);
      expect(await first.generation(alice.id)).toBe(generation);
    },
  );

  it(
    'a start with another password or email makes a new generation, ' +
      'ends the sessions, and leaves the older instance admitting no one',
    async () => {
      await db.query('TRUNCATE credentials, sessions');
      const first = instance(credentials('first password'));
      const { token } = await first.create(alice, client, (await first.generation(alice.id))!);
      const changed = instance(credentials('second password'));
      const renewed = await changed.generation(alice.id);
      expect(renewed).not.toBe(undefined);
      expect(await first.find(token)).toBeUndefined();
      expect((await db.query('SELECT count(*)::int AS count FROM sessions')).rows[0].count).toBe(0);
      expect(await first.generation(alice.id)).toBeUndefined();
      const otherEmail = instance(credentials('second password', 'alice@elsewhere.example'));
      expect(await otherEmail.generation(alice.id)).toBeGreaterThan(renewed!);
    },
  );

  it('instances starting together with a new password agree on one new generation', async () => {
    await db.query('TRUNCATE credentials, sessions');
    await instance(credentials('first password')).checked();
    const together = Array.from({ length: 4 }, () => instance(credentials('second password')));
    const generations = await Promise.all(together.map((started) => started.generation(alice.id)));
    expect(new Set(generations).size).toBe(1);
    expect(generations[0]).toBeDefined();
  });

  it('keeps the password only as a salted scrypt hash', async () => {
    await db.query('TRUNCATE credentials, sessions');
    await instance(credentials('a password to keep')).checked();
    const { rows } = await db.query('SELECT * FROM credentials');
    expect(JSON.stringify(rows)).not.toContain('a password to keep');
    expect(rows[0]).toMatchObject({ user_id: alice.id, email: alice.email, cost: 2 });
    expect(rows[0].password_hash).toHaveLength(32);
    expect(rows[0].salt).toHaveLength(16);
  });
});
