import { describe, expect, it } from 'vitest';
import { CheckQueue, WAITING_PER_ADDRESS, type Lane } from '../../server/auth/login.js';
import { messages } from '../../server/auth/messages.js';
import { clientKey } from '../../server/http/clientAddress.js';
import { ADMIN, deviceFrom, setCookies, USER, useAuthService } from '../support/authClient.js';
import { addresses, fail, failFrom, together, withDevice } from './attempts.js';

const { start } = useAuthService();

describe('auth login throttling', () => {
  it('blocks an account and address pair after 5 failures in 15 minutes, only there', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await fail(service)).status).toBe(401);
      service.advance(1);
    }
    // Even the right password, until the window frees.
    const blocked = await service.login(USER);
    // The first failure, 5 s ago, leaves the 15-minute window in 895 s.
    const answer = [blocked.status, blocked.json, blocked.headers['retry-after']];
    expect(answer).toEqual([429, { error: messages.tooManyAttempts }, '895']);
    expect(setCookies(blocked)).toEqual([]);
    expect((await service.login(USER, undefined, '127.0.0.3')).status).toBe(200);
    service.advance(894);
    expect((await service.login(USER)).status).toBe(429);
    service.advance(1);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('bounds an account at 100 failures an hour; then only its known browsers', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER, undefined, '127.0.0.99'));
    const guesses = (first: number, last: number) =>
      failFrom(service, USER.email, addresses(1, first, last));
    expect(await guesses(1, 20)).toEqual(Array(100).fill(401));
    expect(await guesses(21, 29)).toEqual(Array(45).fill(429));
    const fresh = await service.login(USER, undefined, '127.0.2.1');
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    // Other accounts are not touched.
    expect((await service.login(ADMIN, undefined, '127.0.2.1')).status).toBe(200);

    // The owner's browser shows its device cookie: admitted from any address, for its account.
    const locked = await failFrom(service, ADMIN.email, addresses(1, 1, 20));
    expect(locked).toEqual(Array(100).fill(401));
    expect((await withDevice(service, device, '127.0.3.1', ADMIN)).status).toBe(429);
    const [id, generation, issuedAt, nonce, signature] = device.split('.');
    // Forged, made younger, or of another generation, it no longer matches its signature.
    for (const forged of [
      [id, generation, issuedAt, nonce, 'forged'],
      [id, generation, Number(issuedAt) + 86_400, nonce, signature],
      [id, Number(generation) + 1, issuedAt, nonce, signature],
    ])
      expect((await withDevice(service, forged.join('.'), '127.0.3.1')).status).toBe(429);
    expect((await withDevice(service, device, '127.0.3.1')).status).toBe(200);
    service.advance(3600);
    expect((await service.login(USER, undefined, '127.0.2.1')).status).toBe(200);
  });

  it('admits 24 correct logins arriving together from one address (an office NAT)', async () => {
    const service = await start();
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => service.login(USER, undefined, '127.0.4.1')),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
  });

  it('refuses at once (429, Retry-After: 1) an address with 32 checks waiting', async () => {
    // The default cost: each check takes long enough for the others to arrive while it runs.
    const service = await start({ PASSWORD_HASH_COST: '16384' });
    const answers = await Promise.all(
      Array.from({ length: 45 }, () => fail(service, 'nobody@example.com', '127.0.4.20')),
    );
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.filter((answer) => answer.status === 401).length).toBeGreaterThanOrEqual(34);
    expect(refused.length).toBeGreaterThan(0);
    const tooMany = ['1', { error: messages.tooManyAttempts }];
    for (const answer of refused)
      expect([answer.headers['retry-after'], answer.json]).toEqual(tooMany);
  });

  it('checks guesses arriving together no faster than the limit allows', async () => {
    const service = await start();
    // One trusted device guessing from 20 addresses at once: its own pair limit is what holds it.
    const device = deviceFrom(await service.login(USER, undefined, '127.0.5.1'));
    const wrong = { ...USER, password: 'wrong' };
    const answers = await Promise.all(
      addresses(5, 2, 21).map((from) => withDevice(service, device, from, wrong)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(5).fill(401),
      ...Array(15).fill(429),
    ]);
  });

  it('bounds the failures of an address at 50 in 15 minutes, over every account', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER, undefined, '127.0.6.2'));
    expect(await failFrom(service, ADMIN.email, ['127.0.6.1'])).toEqual(Array(5).fill(401));
    service.advance(45);
    // Unknown emails count too.
    const strangers = await together(45, (i) =>
      fail(service, `stranger-${i}@example.com`, '127.0.6.1'),
    );
    expect(strangers).toEqual(Array(45).fill(401));
    const refused = await fail(service, 'one-more@example.com', '127.0.6.1');
    // The first failure, 45 s ago, leaves the window in 855 s.
    const answer = [refused.status, refused.json, refused.headers['retry-after']];
    expect(answer).toEqual([429, { error: messages.tooManyAttempts }, '855']);
    // Past it even the right password waits, but not from elsewhere, nor a trusted browser.
    expect((await service.login(USER, undefined, '127.0.6.1')).status).toBe(429);
    expect((await service.login(USER, undefined, '127.0.6.3')).status).toBe(200);
    expect((await withDevice(service, device, '127.0.6.1')).status).toBe(200);
    service.advance(855);
    expect((await service.login(USER, undefined, '127.0.6.1')).status).toBe(200);
  });

  it('counts an IPv6 client by its /64', async () => {
    const service = await start({ TRUST_PROXY: 'loopback' });
    const from = (address: string, email: string) =>
      service.request('POST', '/api/login', {
        json: { email, password: 'wrong' },
        headers: { 'x-forwarded-for': address },
      });
    const answers = await together(50, (i) =>
      from(`2001:db8:1:2::${i.toString(16)}`, `stranger-${i}@example.com`),
    );
    expect(answers).toEqual(Array(50).fill(401));
    expect((await from('2001:db8:1:2:ffff::1', 'another@example.com')).status).toBe(429);
    expect((await from('2001:db8:1:3::1', 'another@example.com')).status).toBe(401);
  });

  it('counts per account in any letter case; clears on success; not refusals', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 4; attempt++) await fail(service);
    expect((await service.login(USER)).status).toBe(200);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const email = attempt % 2 ? 'USER@example.com' : USER.email;
      expect((await fail(service, email)).status).toBe(401);
    }
    expect((await service.login(USER)).status).toBe(429);
    expect((await service.login(ADMIN)).status).toBe(200);
    service.advance(60);
    // Were these counted, they would fill the window anew and block past 900 s.
    for (let attempt = 1; attempt <= 10; attempt++) expect((await fail(service)).status).toBe(429);
    service.advance(840);
    // Nor unreadable bodies.
    for (let attempt = 1; attempt <= 11; attempt++)
      expect((await service.postLogin(JSON.stringify({ email: USER.email }))).status).toBe(400);
    expect((await service.login(USER)).status).toBe(200);
  });
});

// The parts of login limiting whose order cannot be seen reliably over HTTP: the queue's turns,
// and the address keys.

/** Checks that end when the test says: `finish()` ends the one started last. */
function checks(queue: CheckQueue) {
  const started: string[] = [];
  const endings = new Map<string, () => void>();
  const run = (address: string, name: string, lane: Lane = 'unknown') =>
    queue.run(
      address,
      lane,
      () => new Promise<void>((end) => (started.push(name), endings.set(name, end))),
    );
  return {
    started,
    run,
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
      ...['a1', 'a2', 'a3', 'a4'].map((name) => queue.run('a', name)),
      ...[
        ['b', 'b1'],
        ['c', 'c1'],
        ['b', 'b2'],
      ].map(([address, name]) => queue.run(address!, name!)),
      queue.run('e', 'e1 account', 'account'),
      queue.run('d', 'd1 trusted', 'trusted'),
    ];
    for (let finished = 0; finished < runs.length; finished++) {
      expect(queue.started.length).toBe(finished + 1);
      await queue.finish();
    }
    await Promise.all(runs);
    // a1 was running; then the trusted browser, the account's attempt; then a, b and c take turns.
    const turns = ['a1', 'd1 trusted', 'e1 account', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4'];
    expect(queue.started).toEqual(turns);
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
    const room = () => [
      queue.hasRoom('a', 'unknown'),
      queue.hasRoom('a', 'account'),
      queue.hasRoom('b', 'unknown'),
    ];
    expect(room()).toEqual([false, true, true]);
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
