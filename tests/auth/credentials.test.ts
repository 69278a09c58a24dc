import { describe, expect, it } from 'vitest';
import { ADMIN, deviceFrom, setCookies, START, tokenFrom, USER } from '../support/authClient.js';
import { useAuthInstances } from '../support/authClient.js';
import { advanceClock, setClock } from '../support/clock.js';

// Credentials that end: device cookies expire and name the account's credential generation, and
// sessions die with their generation, when an administrator ends them all or when the process
// starts again with another password or email. Each case runs on both stores, restarts included.

const instances = useAuthInstances();
const CHANGED = { email: USER.email, password: 'another-password' };

describe.each(['memory', 'postgres'])('with SESSION_STORE=%s', (store) => {
  /** An instance on the test's clock; with postgres, the case's instances share one database. */
  async function instance(env: Record<string, string> = {}) {
    const browser = await instances.configured({ SESSION_STORE: store, ...env });
    const { service, login } = browser;
    // Ready once it has compared the stored credentials with its own, as a load balancer waits.
    expect((await service.request('GET', '/ready')).status).toBe(200);
    return {
      ...browser,
      stop: () => instances.stop(service),
      /** Spends the budget of address `from` with unknown emails: only trusted browsers get in. */
      async block(from: string) {
        // 25 at once, fewer than may wait for a check per address.
        for (const batch of [0, 25])
          await Promise.all(
            Array.from({ length: 25 }, (_, i) =>
              login({ email: `stranger-${batch + i}@example.com`, password: 'wrong' }, from),
            ),
          );
        expect((await login(USER, from)).status).toBe(429);
      },
      /** Whether the browser holding `device` gets in from the blocked address `from`. */
      trusts: async (device: string, from: string, credentials = USER) =>
        (await login(credentials, from, device)).status === 200,
    };
  }

  it('trusts a device cookie for DEVICE_TRUST_DAYS, no longer', async () => {
    setClock(START);
    const service = await instance({ DEVICE_TRUST_DAYS: '2' });
    const reply = await service.login(USER);
    // Naming the account, its generation and the login time.
    expect(setCookies(reply).find((line) => line.startsWith('device='))).toMatch(
      /^device=[^;]+; Max-Age=172800; Path=\/api\/login; HttpOnly; SameSite=Lax$/,
    );
    const [account, generation, issuedAt] = deviceFrom(reply).split('.');
    expect([account, issuedAt]).toEqual(['1', String(START / 1000)]);
    expect(Number(generation)).toBeGreaterThan(0);
    advanceClock(2 * 24 * 3600 - 60);
    await service.block('127.0.1.1');
    expect(await service.trusts(deviceFrom(reply), '127.0.1.1')).toBe(true);
    advanceClock(60);
    expect(await service.trusts(deviceFrom(reply), '127.0.1.1')).toBe(false);
  });

  it("ending an account's sessions voids its sessions and devices, no other's", async () => {
    setClock(START);
    const service = await instance();
    const user = await service.login(USER);
    const [token, device] = [tokenFrom(user), deviceFrom(user)];
    const admin = tokenFrom(await service.login(ADMIN));
    await service.block('127.0.1.2');
    expect(await service.trusts(device, '127.0.1.2')).toBe(true);
    expect((await service.as(admin, 'DELETE', '/api/admin/users/1/sessions')).status).toBe(200);
    expect([await service.me(token), await service.me(admin)]).toEqual([401, 200]);
    expect(await service.trusts(device, '127.0.1.2')).toBe(false);
    // A new login is a new device of the new generation.
    const again = await service.login(USER, '127.0.1.3');
    expect(await service.trusts(deviceFrom(again), '127.0.1.2')).toBe(true);
  });

  it("a restart with a new password ends the account's sessions and device cookies", async () => {
    setClock(START);
    const first = await instance();
    const user = await first.login(USER);
    const admin = tokenFrom(await first.login(ADMIN));
    await first.stop();
    const changed = await instance({ AUTH_USER_PASSWORD: CHANGED.password });
    expect(await changed.me(tokenFrom(user))).toBe(401);
    expect((await changed.login(USER)).status).toBe(401);
    const now = await changed.login(CHANGED, '127.0.1.4');
    expect(now.status).toBe(200);
    await changed.block('127.0.1.5');
    expect(await changed.trusts(deviceFrom(user), '127.0.1.5', CHANGED)).toBe(false);
    expect(await changed.trusts(deviceFrom(now), '127.0.1.5', CHANGED)).toBe(true);
    // The other account kept its password: with PostgreSQL its session lives on.
    expect(await changed.me(admin)).toBe(store === 'postgres' ? 200 : 401);
  });

  if (store === 'postgres')
    it(
      'a restart with the same password and email keeps the sessions and device cookies; ' +
        'another email ends them; an instance whose password another replaced admits no one ' +
        'to that account, counting nothing',
      async () => {
        setClock(START);
        const first = await instance();
        const user = await first.login(USER);
        await first.stop();
        const same = await instance();
        expect(await same.me(tokenFrom(user))).toBe(200);
        await same.block('127.0.1.6');
        expect(await same.trusts(deviceFrom(user), '127.0.1.6')).toBe(true);
        await same.stop();
        const renamed = await instance({ AUTH_USER_EMAIL: 'renamed@example.com' });
        expect(await renamed.me(tokenFrom(user))).toBe(401);
        await renamed.stop();

        const old = await instance();
        await instance({ AUTH_USER_PASSWORD: CHANGED.password });
        for (let attempt = 0; attempt < 6; attempt++)
          expect((await old.login(USER, '127.0.1.7')).status).toBe(401);
        expect((await old.login(ADMIN, '127.0.1.7')).status).toBe(200);
      },
    );
});
