import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../server/auth/sessions.js';
import { FailureLog } from '../../server/auth/throttle.js';

const WINDOW_MS = 15 * 60 * 1000;

// Memory is not visible over HTTP (and the throttle's bound cannot even be reached from one
// test client, blocked after 30 failures), so these bounds are checked on the stores directly.
describe('MemorySessionStore sweeping', () => {
  const user = { id: '1', email: 'user@example.com', role: 'user' as const };
  const client = { address: '127.0.0.1', userAgent: 'test' };

  it('drops expired sessions at the next login', async () => {
    let time = 0;
    const sessions = new MemorySessionStore({ ttlSeconds: 60, max: 100, maxPerUser: 100, now: () => time });
    for (let login = 0; login < 5; login++) await sessions.create(user, client);
    time += 30_000;
    const live = await sessions.create(user, client);
    time += 30_000;
    await sessions.create(user, client);
    expect(sessions.size).toBe(2);
    expect(await sessions.find(live)).toMatchObject({ userId: user.id });
  });

  it('never holds more than its maximum', async () => {
    const sessions = new MemorySessionStore({ ttlSeconds: 60, max: 3, maxPerUser: 100, now: () => 0 });
    for (let login = 0; login < 10; login++) await sessions.create(user, client);
    expect(sessions.size).toBe(3);
  });
});

describe('FailureLog memory bound', () => {
  it('forgets the least recently failing key that is not blocked beyond its capacity', () => {
    let time = 0;
    const log = new FailureLog(3, WINDOW_MS, () => time, 5);
    log.record('first');
    for (const key of ['a', 'b', 'c', 'd']) log.record(key);
    expect(log.size).toBe(5);
    log.record('e');
    expect(log.size).toBe(5);
    expect(log.count('first')).toBe(0);
    expect(log.count('e')).toBe(1);
  });

  it('never forgets a blocked key early: a flood of new keys is not tracked instead', () => {
    let time = 0;
    const log = new FailureLog(3, WINDOW_MS, () => time, 5);
    for (const key of ['a', 'b', 'c', 'd', 'e']) for (let attempt = 0; attempt < 3; attempt++) log.record(key);
    for (let flood = 0; flood < 1000; flood++) log.record(`flood ${flood}`);
    expect(log.size).toBe(5);
    for (const key of ['a', 'b', 'c', 'd', 'e']) expect(log.retryAfterSeconds(key)).toBe(900);
    // Once their failures leave the window, room is made again.
    time += WINDOW_MS;
    log.record('later');
    expect(log.count('later')).toBe(1);
  });

  it('keeps a key that failed again recently over older ones', () => {
    let time = 0;
    const log = new FailureLog(2, WINDOW_MS, () => time, 3);
    log.record('kept');
    log.record('b');
    log.record('c');
    log.record('kept');
    log.record('d'); // evicts b, the least recent
    expect(log.retryAfterSeconds('kept')).toBe(900);
  });

  it('drops keys whose failures have all left the window', () => {
    let time = 0;
    const log = new FailureLog(10, WINDOW_MS, () => time, 100);
    for (const key of ['a', 'b', 'c']) log.record(key);
    time += 15 * 60 * 1000;
    log.record('d');
    expect(log.size).toBe(1);
  });

  it('blocks until the limit-th most recent failure leaves the window', () => {
    let time = 0;
    const log = new FailureLog(3, WINDOW_MS, () => time, 10);
    for (let attempt = 0; attempt < 50; attempt++) {
      log.record('key');
      time += 1000;
    }
    // The third most recent failure (at 47 s) leaves the window at 947 s; it is now 50 s.
    expect(log.retryAfterSeconds('key')).toBe(900 - 3);
  });
});
