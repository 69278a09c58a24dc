import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SessionLimits } from '../../server/auth/sessions.js';
import {
  alice,
  bob,
  client,
  storesOn,
  useAuthDatabase,
  type TestStore,
} from '../support/sessionStores.js';

// What every session store promises, whichever keeps the sessions: each case runs on both.

const stores = storesOn(useAuthDatabase());

const idOf = async (store: TestStore, token: string) => (await store.find(token))!.id;

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
