import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../../server/auth/sessions.js';
import { advanceClock, setClock } from '../support/clock.js';

// Memory is not visible over HTTP, so the store's bounds are checked on it directly.
describe('MemorySessionStore sweeping', () => {
  const user = { id: '1', email: 'user@example.com', role: 'user' as const };
  const client = { address: '127.0.0.1', userAgent: 'test' };

  afterEach(() => vi.useRealTimers());

  it('drops expired sessions at the next login', async () => {
    setClock(0);
    const sessions = new MemorySessionStore({
      ttlSeconds: 60,
      max: 100,
      maxPerUser: 100,
    });
    for (let login = 0; login < 5; login++) await sessions.create(user, client, 1);
    advanceClock(30);
    const { token: live } = await sessions.create(user, client, 1);
    advanceClock(30);
    await sessions.create(user, client, 1);
    expect(sessions.size).toBe(2);
    expect(await sessions.find(live)).toMatchObject({ userId: user.id });
  });

  it('never holds more than its maximum', async () => {
    const sessions = new MemorySessionStore({
      ttlSeconds: 60,
      max: 3,
      maxPerUser: 100,
    });
    for (let login = 0; login < 10; login++) await sessions.create(user, client, 1);
    expect(sessions.size).toBe(3);
  });

  it('refuses, lists no more and drops a session of an older credential generation', async () => {
    const sessions = new MemorySessionStore({ ttlSeconds: 60, max: 100, maxPerUser: 100 });
    const { token: old } = await sessions.create(user, client, 1);
    await sessions.renew(user.id);
    const { token: fresh } = await sessions.create(user, client, 2);
    expect((await sessions.list()).length).toBe(1);
    expect(await sessions.find(old)).toBeUndefined();
    expect(await sessions.find(fresh)).toMatchObject({ userId: user.id });
    expect(sessions.size).toBe(1);
  });
});
