import { describe, expect, it } from 'vitest';
import type { AccountOverview, AccountThrottle } from '../../web/src/pageState.js';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, USER, useAuthService, type AuthClient } from '../support/authClient.js';
import { addresses, fail, failFrom, together } from './attempts.js';

const { start } = useAuthService();

/** An account as the users page shows it. */
async function accountOf(service: AuthClient, admin: string, email = USER.email) {
  const reply = await service.as(admin, 'GET', '/api/admin/users');
  expect(reply.status).toBe(200);
  const { users } = reply.json as { users: AccountOverview[] };
  return users.find((account) => account.email === email)!;
}

const unlock = (service: AuthClient, token?: string, id = '1', headers = {}) =>
  service.as(token, 'DELETE', `/api/admin/users/${id}/throttle`, headers);

const UNBLOCKED = { blocked: false, failures: 0, retryAfterSeconds: null };

describe.each(['memory', 'postgres'])('unlocking an account with SESSION_STORE=%s', (store) => {
  it("shows an address's failures; only an admin's unlock clears them, recorded", async () => {
    const service = await start({ SESSION_STORE: store });
    const [admin, user] = [await signIn(service, ADMIN), await signIn(service)];
    for (let attempt = 1; attempt <= 5; attempt++)
      expect((await fail(service, USER.email, '127.0.0.5')).status).toBe(401);
    expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(429);
    const counted = { blocked: false, failures: 5, retryAfterSeconds: null };
    const blocked = await accountOf(service, admin);
    expect(blocked.throttle).toEqual(counted);
    expect(blocked.events[0]).toMatchObject({
      type: 'login.throttled',
      address: '127.0.0.5',
      detail: { limit: 'pair' },
    });

    // To a user, without a session, from another site, of an unknown account: clearing nothing.
    const refusals = [
      await unlock(service, admin, '99'),
      await unlock(service),
      await unlock(service, user),
      await unlock(service, admin, '1', { origin: 'https://evil.example' }),
    ];
    expect(refusals.map((reply) => [reply.status, reply.json])).toEqual([
      [404, { error: messages.userNotFound }],
      [401, { error: messages.unauthenticated }],
      [403, { error: messages.forbidden }],
      [403, { error: messages.foreignRequest }],
    ]);
    expect((await accountOf(service, admin)).throttle).toEqual(counted);
    for (const path of ['/api/admin/users', '/api/admin/audit']) {
      expect((await service.as(user, 'GET', path)).status).toBe(403);
      expect((await service.as(undefined, 'GET', path)).status).toBe(401);
    }

    // The count, not the refusal of that address until its window ends; recorded with who made it.
    const unlocked = await unlock(service, admin);
    expect([unlocked.status, unlocked.json]).toEqual([200, { cleared: counted }]);
    expect((await accountOf(service, admin)).throttle).toEqual(UNBLOCKED);
    // The address's own failures of the account are its own: they end with their window.
    expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(429);
    expect((await service.login(USER, undefined, '127.0.0.7')).status).toBe(200);
    service.advance(15 * 60);
    expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(200);
    const { events } = await accountOf(service, admin);
    expect(events.find((event) => event.type === 'account.unlocked')).toMatchObject({
      email: USER.email,
      userId: '1',
      detail: { adminId: '2', wasBlocked: false, failures: 5 },
    });
  });

  it("admits the admin's new browser after an unlock; those addresses lock no more", async () => {
    const service = await start({ SESSION_STORE: store });
    const admin = await signIn(service, ADMIN);
    const failEach = () => failFrom(service, ADMIN.email, addresses(10, 1, 20));
    // 100 failures from 20 addresses: past it the account refuses untrusted clients, from
    // anywhere.
    expect(await failEach()).toEqual(Array(100).fill(401));
    // And one address past its own budget, with emails of nobody's.
    await together(50, (i) => fail(service, `stranger-${i}@example.com`, '127.0.11.1'));
    expect((await service.login(ADMIN, undefined, '127.0.12.1')).status).toBe(429);
    const { throttle } = await accountOf(service, admin, ADMIN.email);
    expect([throttle.blocked, throttle.failures]).toEqual([true, 100]);
    expect(throttle.retryAfterSeconds).toBeGreaterThan(3500);

    const { cleared } = (await unlock(service, admin, '2')).json as { cleared: AccountThrottle };
    expect([cleared.blocked, cleared.failures]).toEqual([true, 100]);
    expect((await service.login(ADMIN, undefined, '127.0.12.1')).status).toBe(200);
    // The same 20 addresses try again: each is refused before any check, and counts nothing.
    expect(await failEach()).toEqual(Array(100).fill(429));
    expect((await accountOf(service, admin, ADMIN.email)).throttle).toEqual(UNBLOCKED);
    expect((await service.login(ADMIN, undefined, '127.0.12.2')).status).toBe(200);
    // The address that spent its budget on every account waits on.
    expect((await service.login(ADMIN, undefined, '127.0.11.1')).status).toBe(429);
  });
});
