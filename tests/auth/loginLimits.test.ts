import { describe, expect, it } from 'vitest';
import { AddressBudget } from '../../server/auth/addressBudget.js';
import { clientKey } from '../../server/http/clientAddress.js';
import { FairQueue } from '../../server/auth/fairQueue.js';
import { HttpError } from '../../server/http/errors.js';

// The parts of login throttling whose order and bounds cannot be seen reliably over HTTP: the
// queue's turns, the address keys, and the address table when it is full.

/**
 * Checks that end when the test says: `run(client, name)` queues one, `finish()` ends the one
 * running last started.
 */
function checks(queue: FairQueue) {
  const started: string[] = [];
  const endings = new Map<string, () => void>();
  return {
    started,
    run: (client: string, name: string) =>
      queue.run(
        client,
        () => new Promise<void>((end) => (started.push(name), endings.set(name, end))),
      ),
    async finish() {
      endings.get(started.at(-1)!)!();
      // The next check starts a few turns of the microtask queue later.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('FairQueue', () => {
  it('runs one check at a time here, serving the waiting clients in turn, not in arrival order', async () => {
    const queue = checks(new FairQueue({ running: 1, waiting: 10 }));
    const runs = ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'b2'].map((name) =>
      queue.run(name[0]!, name),
    );
    for (let finished = 0; finished < runs.length; finished++) {
      expect(queue.started.length).toBe(finished + 1);
      await queue.finish();
    }
    await Promise.all(runs);
    // a1 was running; then a, b and c take turns, the rest of a's last.
    expect(queue.started).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4']);
  });

  it('refuses with 503 and Retry-After: 1 past its waiting bound, all clients together', async () => {
    const queue = checks(new FairQueue({ running: 1, waiting: 2 }));
    const runs = ['x', 'y', 'z'].map((name) => queue.run(name, name));
    const refused = await queue.run('w', 'w').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HttpError);
    expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    for (let finished = 0; finished < runs.length; finished++) await queue.finish();
    await Promise.all(runs);
    expect(queue.started).toEqual(['x', 'y', 'z']);
  });
});

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8::a:b:c:d:e', '2001:db8:0:a::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::203.0.113.7', '64:ff9b:0:0::/64'],
  ])('%s is counted as %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});

describe('AddressBudget in memory', () => {
  it('when its table is full, refuses a newcomer until the least recently failing address leaves, and forgets no one', async () => {
    let time = 0;
    const budget = AddressBudget.inMemory(
      () => time,
      { perAddress: 3, windowMs: 900_000, atOnce: 2 },
      2,
    );
    for (const address of ['a', 'b']) {
      const admission = await budget.admit(address);
      if (!('settle' in admission)) throw new Error(`${address} was refused`);
      await admission.settle('failed');
      time += 60_000;
    }
    expect(await budget.admit('newcomer')).toEqual({ retryAfterSeconds: 780, limit: 'address' });
    const known = await budget.admit('a');
    expect('settle' in known).toBe(true);
    time += 780_000;
    expect('settle' in (await budget.admit('newcomer'))).toBe(true);
  });

  it('counts the newcomers in flight against the room left', async () => {
    const budget = AddressBudget.inMemory(
      () => 0,
      { perAddress: 3, windowMs: 900_000, atOnce: 2 },
      2,
    );
    expect('settle' in (await budget.admit('a'))).toBe(true);
    expect('settle' in (await budget.admit('b'))).toBe(true);
    expect(await budget.admit('c')).toEqual({ retryAfterSeconds: 1, limit: 'address' });
  });

  it('tells an attempt to come back when those in flight could reach the limit', async () => {
    const budget = AddressBudget.inMemory(
      () => 0,
      { perAddress: 2, windowMs: 900_000, atOnce: 2 },
      10,
    );
    const first = await budget.admit('a');
    if (!('settle' in first)) throw new Error('refused');
    await first.settle('failed');
    expect('settle' in (await budget.admit('a'))).toBe(true);
    expect(await budget.admit('a')).toEqual({ retryAfterSeconds: 1, limit: 'address' });
  });
});
