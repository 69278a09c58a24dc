import { describe, expect, it } from 'vitest';
import type { AccountOverview, AccountThrottle, AuditEventView } from '../../web/src/pageState.js';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, USER, useAuthService, type AuthClient } from '../support/authClient.js';

const { start } = useAuthService();

const fail = (service: AuthClient, from: string, email = USER.email) =>
  service.login({ email, password: 'wrong' }, undefined, from);

/** An account as the users page shows it. */
async function accountOf(
  service: AuthClient,
  admin: string,
  email: string,
): Promise<AccountOverview> {
  const reply = await service.as(admin, 'GET', '/api/admin/users');
  expect(reply.status).toBe(200);
  return (reply.json as { users: AccountOverview[] }).users.find(
    (account) => account.email === email,
  )!;
}

const userAccount = (service: AuthClient, admin: string) => accountOf(service, admin, USER.email);

const unlock = (
  service: AuthClient,
  admin: string,
  id = '1',
  headers: Record<string, string> = {},
) => service.as(admin, 'DELETE', `/api/admin/users/${id}/throttle`, headers);

describe.each(['memory', 'postgres'])('unlocking an account with SESSION_STORE=%s', (store) => {
  const startService = (env: Record<string, string> = {}) =>
    start({ SESSION_STORE: store, ...env });

  it(
    "shows an address's failures of the account, refuses that address " +
      'until its window ends, and records an unlock and who made it',
    async () => {
      const service = await startService();
      const admin = await signIn(service, ADMIN);
      for (let attempt = 1; attempt <= 5; attempt++)
        expect((await fail(service, '127.0.0.5')).status).toBe(401);
      expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(429);
      const counted = { blocked: false, failures: 5, retryAfterSeconds: null };
      const blocked = await userAccount(service, admin);
      expect(blocked.throttle).toEqual(counted);
      expect(blocked.events[0]).toMatchObject({
        type: 'login.throttled',
        address: '127.0.0.5',
        detail: { limit: 'pair' },
      });

      const unlocked = await unlock(service, admin);
      expect([unlocked.status, unlocked.json]).toEqual([200, { cleared: counted }]);
      expect((await userAccount(service, admin)).throttle).toEqual({
        blocked: false,
        failures: 0,
        retryAfterSeconds: null,
      });
      // The address's own failures of the account are its own: they end with their window.
      expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(429);
      expect((await service.login(USER, undefined, '127.0.0.7')).status).toBe(200);
      service.advance(15 * 60);
      expect((await service.login(USER, undefined, '127.0.0.5')).status).toBe(200);

      const unlocking = (await userAccount(service, admin)).events.find(
        (event: AuditEventView) => event.type === 'account.unlocked',
      );
      expect(unlocking).toMatchObject({
        email: USER.email,
        userId: '1',
        detail: { adminId: '2', wasBlocked: false, failures: 5 },
      });
    },
  );

  it(
    'lets the administrator in from a new browser after an unlock, and ' +
      'the addresses that locked the account cannot lock it again',
    async () => {
      const service = await startService();
      const admin = await signIn(service, ADMIN);
      // 100 failures from 20 addresses: past it the account refuses untrusted clients, from
      // anywhere.
      for (let address = 1; address <= 20; address++) {
        for (let attempt = 1; attempt <= 5; attempt++)
          await fail(service, `127.0.10.${address}`, ADMIN.email);
      }
      // And one address past its own budget, with emails of nobody's.
      for (let attempt = 1; attempt <= 50; attempt++)
        await fail(service, '127.0.11.1', `stranger-${attempt}@example.com`);
      expect((await service.login(ADMIN, undefined, '127.0.12.1')).status).toBe(429);
      const { throttle } = await accountOf(service, admin, ADMIN.email);
      expect([throttle.blocked, throttle.failures]).toEqual([true, 100]);
      expect(throttle.retryAfterSeconds).toBeGreaterThan(3500);

      const { cleared } = (await unlock(service, admin, '2')).json as { cleared: AccountThrottle };
      expect([cleared.blocked, cleared.failures]).toEqual([true, 100]);
      expect((await service.login(ADMIN, undefined, '127.0.12.1')).status).toBe(200);
      // The same 20 addresses try again: each is refused before any check, and counts nothing.
      for (let address = 1; address <= 20; address++) {
        for (let attempt = 1; attempt <= 5; attempt++)
          expect((await fail(service, `127.0.10.${address}`, ADMIN.email)).status).toBe(429);
      }
      expect((await accountOf(service, admin, ADMIN.email)).throttle).toEqual({
        blocked: false,
        failures: 0,
        retryAfterSeconds: null,
      });
      expect((await service.login(ADMIN, undefined, '127.0.12.2')).status).toBe(200);
      // The address that spent its budget on every account waits on.
      expect((await service.login(ADMIN, undefined, '127.0.11.1')).status).toBe(429);
    },
  );

  it(
    'answers 404 for an unknown account, 401 without a session, ' +
      '403 to a user and to a page of another site, clearing nothing',
    async () => {
      const service = await startService();
      const [admin, user] = [await signIn(service, ADMIN), await signIn(service)];
      for (let attempt = 1; attempt <= 5; attempt++) await fail(service, '127.0.0.6');
      expect((await unlock(service, admin, '99')).json).toEqual({ error: messages.userNotFound });
      expect((await unlock(service, admin, '99')).status).toBe(404);
      expect((await service.as(undefined, 'DELETE', '/api/admin/users/1/throttle')).json).toEqual({
        error: messages.unauthenticated,
      });
      const refused = await unlock(service, user);
      expect([refused.status, refused.json]).toEqual([403, { error: messages.forbidden }]);
      const forged = await unlock(service, admin, '1', { origin: 'https://evil.example' });
      expect([forged.status, forged.json]).toEqual([403, { error: messages.foreignRequest }]);
      expect((await service.login(USER, undefined, '127.0.0.6')).status).toBe(429);
      for (const [method, path] of [
        ['GET', '/api/admin/users'],
        ['GET', '/api/admin/audit'],
      ] as const) {
        expect((await service.as(user, method, path)).status).toBe(403);
        expect((await service.as(undefined, method, path)).status).toBe(401);
      }
    },
  );
});
