import { describe, expect, it } from 'vitest';
import { CheckQueue, WAITING_PER_ADDRESS, type Lane } from '../../server/auth/login.js';
import { clientKey } from '../../server/http/clientAddress.js';

// The parts of login limiting whose order cannot be seen reliably over HTTP: the queue's turns,
// and the address keys.

/** Checks that end when the test says: `finish()` ends the one started last. */
function checks(queue: CheckQueue) {
  const started: string[] = [];
  const endings = new Map<string, () => void>();
  return {
    started,
    run: (address: string, name: string, lane: Lane = 'unknown') =>
      queue.run(
        address,
        lane,
        () => new Promise<void>((end) => (started.push(name), endings.set(name, end))),
      ),
    async finish() {
      endings.get(started.at(-1)!)!();
      // The next check starts a few turns of the microtask queue later.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('CheckQueue', () => {
  it('serves addresses in turn, not by arrival, after trusted browsers and accounts', async () => {
    const queue = checks(new CheckQueue(1));
    const runs = [
      queue.run('a', 'a1'),
      queue.run('a', 'a2'),
      queue.run('a', 'a3'),
      queue.run('a', 'a4'),
      queue.run('b', 'b1'),
      queue.run('c', 'c1'),
      queue.run('b', 'b2'),
      queue.run('e', 'e1 account', 'account'),
      queue.run('d', 'd1 trusted', 'trusted'),
    ];
    for (let finished = 0; finished < runs.length; finished++) {
      expect(queue.started.length).toBe(finished + 1);
      await queue.finish();
    }
    await Promise.all(runs);
    // a1 was running; then the trusted browser, the account's attempt; then a, b and c take turns.
    expect(queue.started).toEqual([
      'a1',
      'd1 trusted',
      'e1 account',
      'a2',
      'b1',
      'c1',
      'a3',
      'b2',
      'a4',
    ]);
  });

  it('bounds the checks waiting per address, not for everyone together', async () => {
    const queue = new CheckQueue(1);
    let end = () => {};
    const running = queue.run(
      'a',
      'unknown',
      () => new Promise<void>((resolve) => (end = resolve)),
    );
    const waiting = Array.from({ length: WAITING_PER_ADDRESS }, () =>
      queue.run('a', 'unknown', async () => undefined),
    );
    expect(queue.hasRoom('a', 'unknown')).toBe(false);
    expect(queue.hasRoom('a', 'account')).toBe(true);
    expect(queue.hasRoom('b', 'unknown')).toBe(true);
    end();
    await Promise.all([running, ...waiting]);
    expect(queue.hasRoom('a', 'unknown')).toBe(true);
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
