import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, deviceFrom, setCookies, USER, useAuthService } from '../support/authClient.js';
import { addresses, fail, failFrom, together, withDevice } from './attempts.js';

const { start } = useAuthService();

describe('auth login throttling', () => {
  it(
    'blocks an account and address pair after 5 failures in 15 minutes, even with the right ' +
      'password, until the window frees; the right password from another address gets in',
    async () => {
      const service = await start();
      for (let attempt = 1; attempt <= 5; attempt++) {
        expect((await fail(service)).status).toBe(401);
        service.advance(1);
      }
      const blocked = await service.login(USER);
      expect([blocked.status, blocked.json]).toEqual([429, { error: messages.tooManyAttempts }]);
      // The first failure, 5 s ago, leaves the 15-minute window in 895 s.
      expect(blocked.headers['retry-after']).toBe('895');
      expect(setCookies(blocked)).toEqual([]);
      expect((await service.login(USER, undefined, '127.0.0.3')).status).toBe(200);
      service.advance(894);
      expect((await service.login(USER)).status).toBe(429);
      service.advance(1);
      expect((await service.login(USER)).status).toBe(200);
    },
  );

  it(
    'bounds guessing at 100 failures an hour per account over all addresses; past it only a ' +
      'browser that logged in before gets in, for that account only, its cookie never forged',
    async () => {
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
    },
  );

  it('admits 24 correct logins arriving together from one address (an office NAT)', async () => {
    const service = await start();
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => service.login(USER, undefined, '127.0.4.1')),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
  });

  it(
    'refuses at once an attempt from an address with 32 ' +
      'checks waiting (429, Retry-After: 1), checking nothing',
    async () => {
      // The default cost: each check takes long enough for the others to arrive while it runs.
      const service = await start({ PASSWORD_HASH_COST: '16384' });
      const answers = await Promise.all(
        Array.from({ length: 45 }, () => fail(service, 'nobody@example.com', '127.0.4.20')),
      );
      const refused = answers.filter((answer) => answer.status === 429);
      expect(answers.filter((answer) => answer.status === 401).length).toBeGreaterThanOrEqual(34);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused)
        expect([answer.headers['retry-after'], answer.json]).toEqual([
          '1',
          { error: messages.tooManyAttempts },
        ]);
    },
  );

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

  it(
    'bounds the failures of an address at 50 in 15 minutes, over every account and unknown ' +
      'email; past it even the right password waits, but not from elsewhere, nor a trusted browser',
    async () => {
      const service = await start();
      const device = deviceFrom(await service.login(USER, undefined, '127.0.6.2'));
      expect(await failFrom(service, ADMIN.email, ['127.0.6.1'])).toEqual(Array(5).fill(401));
      service.advance(45);
      const strangers = await together(45, (i) =>
        fail(service, `stranger-${i}@example.com`, '127.0.6.1'),
      );
      expect(strangers).toEqual(Array(45).fill(401));
      const refused = await fail(service, 'one-more@example.com', '127.0.6.1');
      expect([refused.status, refused.json]).toEqual([429, { error: messages.tooManyAttempts }]);
      // The first failure, 45 s ago, leaves the window in 855 s.
      expect(refused.headers['retry-after']).toBe('855');
      expect((await service.login(USER, undefined, '127.0.6.1')).status).toBe(429);
      expect((await service.login(USER, undefined, '127.0.6.3')).status).toBe(200);
      expect((await withDevice(service, device, '127.0.6.1')).status).toBe(200);
      service.advance(855);
      expect((await service.login(USER, undefined, '127.0.6.1')).status).toBe(200);
    },
  );

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

  it(
    'counts each account on its own, emails in any letter case as one; clears a pair on ' +
      'success; counts neither refusals nor unreadable bodies',
    async () => {
      const service = await start();
      for (let attempt = 1; attempt <= 4; attempt++) await fail(service);
      expect((await service.login(USER)).status).toBe(200);
      for (let attempt = 1; attempt <= 5; attempt++)
        expect((await fail(service, attempt % 2 ? 'USER@example.com' : USER.email)).status).toBe(
          401,
        );
      expect((await service.login(USER)).status).toBe(429);
      expect((await service.login(ADMIN)).status).toBe(200);
      service.advance(60);
      // Were these counted, they would fill the window anew and block past 900 s.
      for (let attempt = 1; attempt <= 10; attempt++)
        expect((await fail(service)).status).toBe(429);
      service.advance(840);
      for (let attempt = 1; attempt <= 11; attempt++)
        expect((await service.postLogin(JSON.stringify({ email: USER.email }))).status).toBe(400);
      expect((await service.login(USER)).status).toBe(200);
    },
  );
});
