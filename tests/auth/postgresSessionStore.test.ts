import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { PostgresSessionStore } from '../../server/auth/postgresSessions.js';
import { alice, bob, client, LIMITS, postgresStore, storesOn } from '../support/sessionStores.js';
import { useAuthDatabase } from '../support/sessionStores.js';

// What the PostgreSQL store keeps in its tables, and the credential generations every instance
// agrees on.

const db = useAuthDatabase();
const stores = storesOn(db);
const rowCount = async (table: string) =>
  (await db().query(`SELECT count(*)::int AS count FROM ${table}`)).rows[0].count;

describe('the PostgreSQL session store', () => {
  it('keeps only the SHA-256 of each token: the table yields no usable token', async () => {
    const store = await stores.postgres();
    const token = await store.create(alice, client);
    const { rows } = await db().query('SELECT * FROM sessions');
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows[0].token_hash).toEqual(createHash('sha256').update(token).digest());
  });

  it('refreshes the last-seen time of a session used after a minute, only that one', async () => {
    const store = await stores.postgres();
    const used = await store.create(alice, client);
    await store.create(bob, client);
    await db().query("UPDATE sessions SET last_seen_at = now() - interval '2 minutes'");
    const lastSeen = async () =>
      new Map((await store.list()).map((s) => [s.userId, Date.now() - Date.parse(s.lastSeenAt)]));
    expect(await store.find(used)).toBeDefined();
    await vi.waitFor(async () => expect((await lastSeen()).get(alice.id)).toBeLessThan(10_000));
    expect((await lastSeen()).get(bob.id)).toBeGreaterThan(110_000);
  });

  it('deletes expired rows when swept, and only those', async () => {
    const short = await postgresStore(db(), { ...LIMITS, ttlSeconds: 1 });
    const long = await postgresStore(db());
    await db().query('TRUNCATE sessions');
    await short.create(alice, client, (await short.generation(alice.id))!);
    const { token: live } = await long.create(bob, client, (await long.generation(bob.id))!);
    await sleep(1_100);
    const swept = [await short.sweep(), await short.sweep(), await rowCount('sessions')];
    expect(swept).toEqual([1, 0, 1]);
    expect(await short.find(live)).toBeDefined();
  });
});

describe('credential generations in PostgreSQL', () => {
  const credentials = (password: string, email = alice.email) => [
    { id: alice.id, email, password },
  ];
  /** An instance's store, with its credentials as it starts. */
  const instance = (own: ReturnType<typeof credentials>) =>
    new PostgresSessionStore(db(), LIMITS, own, 2);

  it('keeps the generation while email and password stay; a new one ends sessions', async () => {
    // The same email in any letter case.
    await db().query('TRUNCATE credentials, sessions');
    const first = instance(credentials('first password'));
    const generation = await first.generation(alice.id);
    const again = instance(credentials('first password', alice.email.toUpperCase()));
    expect(await again.generation(alice.id)).toBe(generation);
    expect(await first.generation(alice.id)).toBe(generation);

    // Another password or email: the older instance admits no one.
    const { token } = await first.create(alice, client, generation!);
    const changed = instance(credentials('second password'));
    const renewed = await changed.generation(alice.id);
    expect(renewed).not.toBe(undefined);
    expect(await first.find(token)).toBeUndefined();
    expect(await rowCount('sessions')).toBe(0);
    expect(await first.generation(alice.id)).toBeUndefined();
    const otherEmail = instance(credentials('second password', 'alice@elsewhere.example'));
    expect(await otherEmail.generation(alice.id)).toBeGreaterThan(renewed!);
  });

  it('instances starting at once with a new password agree on one generation', async () => {
    await db().query('TRUNCATE credentials, sessions');
    await instance(credentials('first password')).checked();
    const together = Array.from({ length: 4 }, () => instance(credentials('second password')));
    const generations = await Promise.all(together.map((one) => one.generation(alice.id)));
    expect(new Set(generations).size).toBe(1);
    expect(generations[0]).toBeDefined();
    // The password is kept only as a salted scrypt hash.
    const { rows } = await db().query('SELECT * FROM credentials');
    expect(JSON.stringify(rows)).not.toMatch(/first password|second password/);
    expect(rows[0]).toMatchObject({ user_id: alice.id, email: alice.email, cost: 2 });
    expect([rows[0].password_hash.length, rows[0].salt.length]).toEqual([32, 16]);
  });
});
