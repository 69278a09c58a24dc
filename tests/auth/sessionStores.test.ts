import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../../server/auth/sessions.js';
import { alice, bob, client, LIMITS, storesOn, useAuthDatabase } from '../support/sessionStores.js';
import type { TestStore } from '../support/sessionStores.js';
import { advanceClock, setClock } from '../support/clock.js';

// What every session store promises, whichever keeps the sessions: each case runs on both.

const stores = storesOn(useAuthDatabase());

const idOf = async (store: TestStore, token: string) => (await store.find(token))!.id;
const alive = (store: TestStore, tokens: string[]) =>
  Promise.all(tokens.map(async (token) => (await store.find(token)) !== undefined));

afterEach(() => vi.useRealTimers());

describe.each(Object.entries(stores))('the %s session store', (name, make) => {
  it('a token names its session until removed, as its removal does; others none', async () => {
    const store = await make();
    const token = await store.create(alice, client);
    expect(await store.find(token)).toEqual({ id: expect.any(String), userId: alice.id });
    const id = await idOf(store, token);
    expect(await store.remove(token)).toEqual({ id, userId: alice.id });
    for (const none of [token, randomUUID(), 'not a token']) {
      expect(await store.find(none), none).toBeUndefined();
      expect(await store.remove(none), none).toBeUndefined();
    }
  });

  it('lookups sent at once each name their own session, repeated, ended or unknown', async () => {
    const store = await make();
    const tokens = [await store.create(alice, client), await store.create(bob, client)];
    const ended = await store.create(alice, client);
    await store.remove(ended);
    const expected = new Map<string, unknown>([
      [tokens[0]!, { id: await idOf(store, tokens[0]!), userId: alice.id }],
      [tokens[1]!, { id: await idOf(store, tokens[1]!), userId: bob.id }],
    ]);
    const sent = Array.from({ length: 600 }, (_, i) => [...tokens, ended, randomUUID()][i % 4]!);
    const found = await Promise.all(sent.map((token) => store.find(token)));
    expect(found).toEqual(sent.map((token) => expected.get(token)));
  });

  it("lists live sessions oldest first, each account's on demand, never a token", async () => {
    const store = await make();
    const curl = { address: '198.51.100.2', userAgent: 'curl/8' };
    const tokens = [
      await store.create(alice, client),
      await store.create(bob, curl),
      await store.create(alice, client),
    ];
    const ids = await Promise.all(tokens.map((token) => idOf(store, token)));
    const all = await store.list();
    expect(all.map((session) => session.id)).toEqual(ids);
    // With who opened them.
    expect(all[1]).toEqual({
      ...{ id: ids[1], userId: bob.id, ...curl },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      ...{ lastSeenAt: expect.any(String), expiresAt: expect.any(String) },
    });
    const lifetime = Date.parse(all[1]!.expiresAt) - Date.parse(all[1]!.createdAt);
    expect(lifetime).toBeCloseTo(3600_000, -2);
    expect((await store.list(alice.id)).map((session) => session.id)).toEqual([ids[0], ids[2]]);
    expect(await store.list('no such account')).toEqual([]);
    for (const token of tokens) expect(JSON.stringify(all)).not.toContain(token);
  });

  it("ends a session by id (the owner's alone, if named); an account's but one", async () => {
    const store = await make();
    const [aliceToken, bobToken] = [
      await store.create(alice, client),
      await store.create(bob, client),
    ];
    const bobId = await idOf(store, bobToken);
    expect(await store.end(bobId, alice.id)).toBeUndefined();
    expect(await store.find(bobToken)).toBeDefined();
    expect(await store.end(bobId)).toEqual({ id: bobId, userId: bob.id });
    expect(await store.find(bobToken)).toBeUndefined();
    for (const none of [bobId, randomUUID(), "1' OR '1'='1"])
      expect(await store.end(none), none).toBeUndefined();
    const aliceId = await idOf(store, aliceToken);
    expect(await store.end(aliceId, alice.id)).toEqual({ id: aliceId, userId: alice.id });

    // Every session of an account but the one kept, and no other account’s.
    const kept = await store.create(alice, client);
    const others = [await store.create(alice, client), await store.create(alice, client)];
    const bobs = await store.create(bob, client);
    expect(await store.endAllOf(alice.id, await idOf(store, kept))).toBe(2);
    expect(await alive(store, [...others, kept, bobs])).toEqual([false, false, true, true]);
    expect(await store.endAllOf(alice.id)).toBe(1);
    expect(await store.list()).toHaveLength(1);
  });

  it('keeps at most maxPerUser per account and max in all; names what each cap ended', async () => {
    // An account's oldest end, never another's.
    const perUser = await make({ maxPerUser: 3 });
    const bobs = await perUser.create(bob, client);
    const tokens: string[] = [];
    for (let login = 0; login < 5; login++) tokens.push(await perUser.create(alice, client));
    const [gone, live] = [false, true];
    expect(await alive(perUser, [...tokens, bobs])).toEqual([gone, gone, live, live, live, live]);

    // The oldest of all end.
    const max = await make({ max: 3 });
    tokens.splice(0);
    for (let login = 0; login < 5; login++)
      tokens.push(await max.create(login % 2 ? bob : alice, client));
    expect(await alive(max, tokens)).toEqual([false, false, true, true, true]);
    expect(await max.list()).toHaveLength(3);

    // Also for logins arriving together.
    const both = await make({ max: 6, maxPerUser: 4 });
    await Promise.all(
      Array.from({ length: 24 }, (_, login) => both.create(login % 3 ? alice : bob, client)),
    );
    const all = await both.list();
    expect(all.length).toBeLessThanOrEqual(6);
    for (const user of [alice, bob])
      expect(all.filter((session) => session.userId === user.id).length).toBeLessThanOrEqual(4);

    const named = await make({ max: 3, maxPerUser: 2 });
    const capped = [];
    for (const user of [alice, alice, alice, bob, bob])
      capped.push((await named.login(user, client)).capped);
    const ended = (cap: string) => [{ userId: alice.id, cap, ended: 1 }];
    expect(capped).toEqual([[], [], ended('SESSION_MAX_PER_USER'), [], ended('SESSION_MAX')]);
  });

  it("drops a session past its lifetime, or of an account's older generation", async () => {
    // Refused, no longer listed, no longer counted.
    const store = await make({ ttlSeconds: 1 });
    const token = await store.create(alice, client);
    expect([await store.find(token), await store.count()]).toEqual([expect.anything(), 1]);
    // PostgreSQL keeps its own time, so the lifetime passes for real there; the memory store
    // reads the process's clock.
    if (name === 'postgres') await sleep(1_100);
    else advanceClock(1.1);
    const seen = [await store.count(), await store.find(token), await store.list()];
    expect(seen).toEqual([0, undefined, []]);

    // No other account's.
    const renewed = await make();
    const [before, bobs] = [await renewed.create(alice, client), await renewed.create(bob, client)];
    await renewed.renew(alice.id);
    const after = await renewed.create(alice, client);
    expect(await renewed.count()).toBe(2);
    expect(await alive(renewed, [before, after, bobs])).toEqual([false, true, true]);
    const users = (await renewed.list()).map((session) => session.userId).sort();
    expect(users).toEqual([alice.id, bob.id]);
  });
});

// Memory is not visible over HTTP, so the memory store's own bounds are checked on it directly.
describe('the memory session store, held in the process', () => {
  const user = { id: '1', email: 'user@example.com', role: 'user' as const };

  it('drops expired sessions at the next login, those past max, and old generations', async () => {
    setClock(0);
    const sessions = new MemorySessionStore({ ...LIMITS, ttlSeconds: 60 });
    for (let login = 0; login < 5; login++) await sessions.create(user, client, 1);
    advanceClock(30);
    const { token: live } = await sessions.create(user, client, 1);
    advanceClock(30);
    await sessions.create(user, client, 1);
    expect(sessions.size).toBe(2);
    expect(await sessions.find(live)).toMatchObject({ userId: user.id });

    const capped = new MemorySessionStore({ ...LIMITS, max: 3 });
    for (let login = 0; login < 10; login++) await capped.create(user, client, 1);
    expect(capped.size).toBe(3);

    const renewed = new MemorySessionStore(LIMITS);
    const { token: old } = await renewed.create(user, client, 1);
    await renewed.renew(user.id);
    const { token: fresh } = await renewed.create(user, client, 2);
    expect(await renewed.list()).toHaveLength(1);
    expect(await renewed.find(old)).toBeUndefined();
    expect(await renewed.find(fresh)).toMatchObject({ userId: user.id });
    expect(renewed.size).toBe(1);
  });
});
