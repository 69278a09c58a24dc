import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../server/auth/sessions.js';
import { FailureLog } from '../../server/auth/failureCounts.js';

const WINDOW_MS = 15 * 60 * 1000;

// Memory is not visible over HTTP (and the address table's bound cannot even be reached from one
// test client, blocked after 50 failures), so these bounds are checked on the stores directly.
describe('MemorySessionStore sweeping', () => {
  const user = { id: '1', email: 'user@example.com', role: 'user' as const };
  const client = { address: '127.0.0.1', userAgent: 'test' };

  it('drops expired sessions at the next login', async () => {
    let time = 0;
    const sessions = new MemorySessionStore({
      ttlSeconds: 60,
      max: 100,
      maxPerUser: 100,
      now: () => time,
      generationOf: () => 1,
    });
    for (let login = 0; login < 5; login++) await sessions.create(user, client, 1);
    time += 30_000;
    const { token: live } = await sessions.create(user, client, 1);
    time += 30_000;
    await sessions.create(user, client, 1);
    expect(sessions.size).toBe(2);
    expect(await sessions.find(live)).toMatchObject({ userId: user.id });
  });

  it('never holds more than its maximum', async () => {
    const sessions = new MemorySessionStore({
      ttlSeconds: 60,
      max: 3,
      maxPerUser: 100,
      now: () => 0,
      generationOf: () => 1,
    });
    for (let login = 0; login < 10; login++) await sessions.create(user, client, 1);
    expect(sessions.size).toBe(3);
  });

  it('refuses, lists no more and drops a session of an older credential generation', async () => {
    let generation = 1;
    const sessions = new MemorySessionStore({
      ttlSeconds: 60,
      max: 100,
      maxPerUser: 100,
      now: () => 0,
      generationOf: () => generation,
    });
    const { token: old } = await sessions.create(user, client, 1);
    generation = 2;
    const { token: fresh } = await sessions.create(user, client, 2);
    expect((await sessions.list()).length).toBe(1);
    expect(await sessions.find(old)).toBeUndefined();
    expect(await sessions.find(fresh)).toMatchObject({ userId: user.id });
    expect(sessions.size).toBe(1);
  });
});

describe('FailureLog memory bound', () => {
  it('never forgets a counting key to make room: past its capacity a newcomer waits until the least recently failing key leaves', () => {
    let time = 0;
    const log = new FailureLog(3, WINDOW_MS, () => time, 5);
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      expect(log.waitForRoom(key, 0)).toBeUndefined();
      log.record(key);
      time += 60_000;
    }
    // 'a' failed 5 minutes ago: it leaves the window in 10 minutes.
    expect(log.waitForRoom('newcomer', 0)).toBe(600);
    expect(log.waitForRoom('a', 0)).toBeUndefined();
    expect(log.state('a')).toEqual({ failures: 1 });
    time += 600_000;
    expect(log.waitForRoom('newcomer', 0)).toBeUndefined();
    expect(log.size).toBe(4);
  });

  it('counts the newcomers on their way against its capacity', () => {
    const log = new FailureLog(3, WINDOW_MS, () => 0, 5);
    for (const key of ['a', 'b', 'c']) log.record(key);
    expect(log.waitForRoom('d', 1)).toBeUndefined();
    expect(log.waitForRoom('d', 2)).toBe(900);
  });

  it('drops keys whose failures have all left the window', () => {
    let time = 0;
    const log = new FailureLog(10, WINDOW_MS, () => time, 100);
    for (const key of ['a', 'b', 'c']) log.record(key);
    time += 15 * 60 * 1000;
    log.record('d');
    expect(log.size).toBe(1);
  });

  it("blocks until the limit-th most recent failure leaves the window, keeping only the limit's timestamps", () => {
    let time = 0;
    const log = new FailureLog(3, WINDOW_MS, () => time, 10);
    for (let attempt = 0; attempt < 50; attempt++) {
      log.record('key');
      time += 1000;
    }
    // The third most recent failure (at 47 s) leaves the window at 947 s; it is now 50 s.
    expect(log.state('key')).toEqual({ failures: 3, retryAfterSeconds: 900 - 3 });
  });
});
