import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, deviceFrom, setCookies, USER, useAuthService, type AuthClient } from '../support/authClient.js';

const { start } = useAuthService();

describe('auth login throttling', () => {
  const fail = (service: AuthClient, email = USER.email, from = '127.0.0.1') => service.login({ email, password: 'wrong' }, undefined, from);

  it('blocks an account and client address pair after 5 failures in 15 minutes, even with the right password, until the window frees', async () => {
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
  });

  it('admits the right password from another address while one address is blocked for the account', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 10; attempt++) await fail(service, USER.email, '127.0.0.2');
    expect((await service.login(USER, undefined, '127.0.0.2')).status).toBe(429);
    expect((await service.login(USER, undefined, '127.0.0.3')).status).toBe(200);
    expect((await service.login(USER)).status).toBe(200);
  });

  it('bounds guessing at 100 failures an hour per account over all addresses; past it only a browser that logged in before gets in', async () => {
    const service = await start();
    const owner = await service.login(USER, undefined, '127.0.0.99');
    const device = deviceFrom(owner);
    let failures = 0;
    for (let address = 2; address <= 30; address++) {
      for (let attempt = 1; attempt <= 5; attempt++) if ((await fail(service, USER.email, `127.0.1.${address}`)).status === 401) failures++;
    }
    expect(failures).toBe(100);
    const fresh = await service.login(USER, undefined, '127.0.2.1');
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers['retry-after'])).toBeGreaterThan(0);
    // The owner's browser shows its device cookie: admitted, from any address.
    const trusted = await service.request('POST', '/api/login', { json: USER, headers: { cookie: `device=${device}` }, localAddress: '127.0.2.2' });
    expect(trusted.status).toBe(200);
    // Other accounts are not touched.
    expect((await service.login(ADMIN, undefined, '127.0.2.1')).status).toBe(200);
    service.advance(3600);
    expect((await service.login(USER, undefined, '127.0.2.1')).status).toBe(200);
  });

  it('trusts a device cookie only for the account it was issued for, and never a forged one', async () => {
    const service = await start();
    const device = deviceFrom(await service.login(USER));
    for (let address = 2; address <= 21; address++) {
      for (let attempt = 1; attempt <= 5; attempt++) {
        await fail(service, ADMIN.email, `127.0.1.${address}`);
        await fail(service, USER.email, `127.0.1.${address}`);
      }
    }
    const withDevice = (cookie: string, credentials = USER) => service.request('POST', '/api/login', { json: credentials, headers: { cookie: `device=${cookie}` }, localAddress: '127.0.3.1' });
    expect((await withDevice(device, ADMIN)).status).toBe(429);
    const [id, nonce] = device.split('.');
    expect((await withDevice(`${id}.${nonce}.forged`)).status).toBe(429);
    expect((await withDevice(device)).status).toBe(200);
  });

  it('admits correct logins arriving together, every one of them', async () => {
    const service = await start();
    const answers = await Promise.all(Array.from({ length: 16 }, () => service.login(USER)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill(200));
  });

  it('checks guesses arriving together no faster than the limit allows: 5 wrong, the rest wait and are refused', async () => {
    const service = await start();
    const answers = await Promise.all(Array.from({ length: 20 }, () => fail(service)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
  });

  it('counts each account on its own, and emails whatever their letter case as one', async () => {
    const service = await start();
    for (let attempt = 1; attempt <= 5; attempt++) await fail(service, attempt % 2 ? 'USER@example.com' : USER.email);
    expect((await service.login(USER)).status).toBe(429);
    expect((await service.login(ADMIN)).status).toBe(200);
  });

  it('clears a pair\'s failures on success', async () => {
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
