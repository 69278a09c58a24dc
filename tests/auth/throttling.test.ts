import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import {
  ADMIN,
  deviceFrom,
  setCookies,
  USER,
  useAuthService,
  type AuthClient,
} from '../support/authClient.js';

const { start } = useAuthService();

describe('auth login throttling', () => {
  const fail = (service: AuthClient, email = USER.email, from = '127.0.0.1') =>
    service.login({ email, password: 'wrong' }, undefined, from);

  it(
    'blocks an account and client address pair after 5 failures in ' +
      '15 minutes, even with the right password, until the window frees',
    async () => {
      const service = await start();
      for (let attempt = 1; attempt <= 5; attempt++) {
        expect((await fail(service)).status).toBe(401);
        service.advance(1);
      }
      const blocked = await service.login(USER);
      expect(blocked.status).toBe(429);
      expect(blocked.json).toEqual({ error: messages.tooManyAttempts });
      // The first failure, 5 s ago, leaves the 15-minute window in 895 s.
      expect(blocked.headers['retry-after']).toBe('895');
      expect(setCookies(blocked)).toEqual([]);

      service.advance(894);
      expect((await service.login(USER)).status).toBe(429);
      service.advance(1);
      expect((await service.login(USER)).status).toBe(200);
    },
  );

  it('admits the right password from another address while one is blocked', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service, USER.email, '127.0.0.2');
    expect((await service.login(USER, undefined, '127.0.0.2')).status).toBe(429);
    expect((await service.login(USER, undefined, '127.0.0.3')).status).toBe(200);
    expect((await service.login(USER)).status).toBe(200);
  });

  it(
    'bounds guessing at 100 failures an hour per account over all ' +
      'addresses; past it only a browser that logged in before gets in',
    async () => {
      const service = await start();
      const owner = await service.login(USER, undefined, '127.0.0.99');
      const device = deviceFrom(owner);
      let failures = 0;
      for (let address = 2; address <= 30; address++) {
        for (let attempt = 1; attempt <= 5; attempt++)
          if ((await fail(service, USER.email, `127.0.1.${address}`)).status === 401) failures++;
      }
      expect(failures).toBe(100);
      const fresh = await service.login(USER, undefined, '127.0.2.1');
      expect(fresh.status).toBe(429);
      expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
      // The owner's browser shows its device cookie: admitted, from any address.
      const trusted = await service.request('POST', '/api/login', {
        json: USER,
        headers: { cookie: `device=${device}` },
        localAddress: '127.0.2.2',
      });
      expect(trusted.status).toBe(200);
      // Other accounts are not touched.
      expect((await service.login(ADMIN, undefined, '127.0.2.1')).status).toBe(200);
      service.advance(3600);
      expect((await service.login(USER, undefined, '127.0.2.1')).status).toBe(200);
    },
  );

  it('trusts a device cookie only for the account it was issued for, never forged', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER));
    for (let address = 2; address <= 21; address++) {
      for (let attempt = 1; attempt <= 5; attempt++) {
        await fail(service, ADMIN.email, `127.0.1.${address}`);
        await fail(service, USER.email, `127.0.1.${address}`);
      }
    }
    const withDevice = (cookie: string, credentials = USER) =>
      service.request('POST', '/api/login', {
        json: credentials,
        headers: { cookie: `device=${cookie}` },
        localAddress: '127.0.3.1',
      });
    expect((await withDevice(device, ADMIN)).status).toBe(429);
    const [id, generation, issuedAt, nonce, signature] = device.split('.');
    expect((await withDevice(`${id}.${generation}.${issuedAt}.${nonce}.forged`)).status).toBe(429);
    // Made younger, or of another generation, it no longer matches its signature.
    expect(
      (await withDevice(`${id}.${generation}.${Number(issuedAt) + 86_400}.${nonce}.${signature}`))
        .status,
    ).toBe(429);
    expect(
      (await withDevice(`${id}.${Number(generation) + 1}.${issuedAt}.${nonce}.${signature}`))
        .status,
    ).toBe(429);
    expect((await withDevice(device)).status).toBe(200);
  });

  it(
    'admits correct logins arriving together, 24 from one ' +
      'address (an office behind one NAT), every one of them',
    async () => {
      const service = await start();
      const answers = await Promise.all(
        Array.from({ length: 24 }, () => service.login(USER, undefined, '127.0.4.1')),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
    },
  );

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

  it(
    'checks guesses arriving together no faster than the ' +
      'limit allows: 5 wrong, the rest wait and are refused',
    async () => {
      const service = await start();
      // One trusted device guessing from 20 addresses at once: its own pair limit is what holds it.
      const device = deviceFrom(await service.login(USER, undefined, '127.0.5.1'));
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          service.request('POST', '/api/login', {
            json: { ...USER, password: 'wrong' },
            headers: { cookie: `device=${device}` },
            localAddress: `127.0.5.${2 + i}`,
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    },
  );

  it(
    'bounds the failures of an address at 50 in 15 minutes, over ' +
      'every account and unknown email; past it even the right ' +
      'password waits, but not from elsewhere, nor a trusted browser',
    async () => {
      const service = await start();
      const device = deviceFrom(await service.login(USER, undefined, '127.0.6.2'));
      for (let attempt = 1; attempt <= 5; attempt++)
        expect((await fail(service, ADMIN.email, '127.0.6.1')).status).toBe(401);
      for (let attempt = 1; attempt <= 45; attempt++) {
        expect((await fail(service, `stranger-${attempt}@example.com`, '127.0.6.1')).status).toBe(
          401,
        );
        service.advance(1);
      }
      const refused = await fail(service, 'one-more@example.com', '127.0.6.1');
      expect([refused.status, refused.json]).toEqual([429, { error: messages.tooManyAttempts }]);
      // The first failure, 45 s ago, leaves the window in 855 s.
      expect(refused.headers['retry-after']).toBe('855');
      expect((await service.login(USER, undefined, '127.0.6.1')).status).toBe(429);
      expect((await service.login(USER, undefined, '127.0.6.3')).status).toBe(200);
      const trusted = await service.request('POST', '/api/login', {
        json: USER,
        headers: { cookie: `device=${device}` },
        localAddress: '127.0.6.1',
      });
      expect(trusted.status).toBe(200);
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
    for (let attempt = 1; attempt <= 50; attempt++)
      expect(
        (await from(`2001:db8:1:2::${attempt.toString(16)}`, `stranger-${attempt}@example.com`))
          .status,
      ).toBe(401);
    expect((await from('2001:db8:1:2:ffff::1', 'another@example.com')).status).toBe(429);
    expect((await from('2001:db8:1:3::1', 'another@example.com')).status).toBe(401);
  });

  it('counts each account on its own, and emails whatever their letter case as one', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++)
      await fail(service, attempt % 2 ? 'USER@example.com' : USER.email);
    expect((await service.login(USER)).status).toBe(429);
    expect((await service.login(ADMIN)).status).toBe(200);
  });

  it("clears a pair's failures on success", async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 4; attempt++) await fail(service);
    expect((await service.login(USER)).status).toBe(200);
    for (let attempt = 1; attempt <= 5; attempt++) expect((await fail(service)).status).toBe(401);
    expect((await fail(service)).status).toBe(429);
  });

  it('does not count requests it refused as failures', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) await fail(service);
    service.advance(60);
    // Were these counted, they would fill the window anew and block past 900 s.
    for (let attempt = 1; attempt <= 10; attempt++) expect((await fail(service)).status).toBe(429);
    service.advance(840);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('does not count bodies it could not read', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 11; attempt++) {
      expect((await service.postLogin(JSON.stringify({ email: USER.email }))).status).toBe(400);
    }
    expect((await service.login(USER)).status).toBe(200);
  });
});
