import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, tokenFrom, USER, useAuthService } from '../support/authClient.js';
import { allEvents, attempt, auditPage, eventLines } from '../support/audit.js';
import { sessionId } from './attempts.js';

// What the audit trail records, and how administrators read it; what bounds it is in
// auditBounds.test.ts.
const { start } = useAuthService();
const ONE = { ended: 1 };

describe.each(['memory', 'postgres'])('the audit trail with SESSION_STORE=%s', (store) => {
  it(
    'records each login outcome with its fields, newest ' +
      'first, for administrators only, and never a secret',
    async () => {
      const service = await start({ SESSION_STORE: store });
      const token = tokenFrom(await attempt(service, USER, 'req-ok'));
      const wrong = (email: string, guess: number, requestId: string, from?: string) =>
        attempt(service, { email, password: `wrong-guess-${guess}` }, requestId, from);
      expect((await wrong(USER.email, 1, 'req-wrong')).status).toBe(401);
      expect((await wrong('Nobody@Example.com', 2, 'req-unknown')).status).toBe(401);
      for (let failure = 1; failure <= 5; failure++)
        await wrong(ADMIN.email, failure + 2, `req-admin-${failure}`, '127.0.0.2');
      const throttled = await attempt(service, ADMIN, 'req-throttled', '127.0.0.2');
      expect(throttled.status).toBe(429);
      const admin = await signIn(service, ADMIN);

      const { events, next } = await auditPage(service, admin);
      expect(next).toBeNull();
      expect(events.map((event) => event.id)).toEqual(
        [...events.map((event) => event.id)].sort((a, b) => b - a),
      );
      const byRequest = (requestId: string) =>
        events.find((event) => event.requestId === requestId);
      expect(byRequest('req-ok')).toEqual({
        id: expect.any(Number),
        time: expect.stringMatching(/^2030-01-01T00:00:00\.000Z$/),
        type: 'login.succeeded',
        email: USER.email,
        userId: '1',
        address: '127.0.0.1',
        userAgent: 'Audit/1.0',
        requestId: 'req-ok',
        detail: { trustedDevice: false },
      });
      const fromTheBrowser = { address: '127.0.0.1', userAgent: 'Audit/1.0' };
      expect(byRequest('req-wrong')).toMatchObject({
        type: 'login.failed',
        email: USER.email,
        userId: '1',
        ...fromTheBrowser,
        detail: { reason: 'wrong password' },
      });
      expect(byRequest('req-unknown')).toMatchObject({
        type: 'login.failed',
        email: 'nobody@example.com',
        userId: null,
        ...fromTheBrowser,
        detail: { reason: 'unknown email' },
      });
      expect(byRequest('req-throttled')).toMatchObject({
        type: 'login.throttled',
        email: ADMIN.email,
        userId: '2',
        address: '127.0.0.2',
        userAgent: 'Audit/1.0',
        detail: { limit: 'pair', retryAfterSeconds: Number(throttled.headers['retry-after']) },
      });
      expect(
        events.filter((event) => event.type === 'login.failed' && event.address === '127.0.0.2'),
      ).toHaveLength(5);

      // Nothing the clients sent as a secret is kept or logged, and every line is short.
      const secrets = [
        USER.password,
        ADMIN.password,
        token,
        admin,
        ...Array.from({ length: 7 }, (_, i) => `wrong-guess-${i + 1}`),
      ];
      for (const secret of secrets) expect(JSON.stringify(events)).not.toContain(secret);
      const lines = eventLines(service);
      expect(lines.map((line) => line.event)).toContain('login.throttled');
      for (const line of lines) {
        for (const secret of secrets) expect(JSON.stringify(line)).not.toContain(secret);
        expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(400);
      }
      expect(lines.find((line) => line.reqId === 'req-throttled')).toMatchObject({
        level: 40,
        event: 'login.throttled',
        userId: '2',
        detail: { limit: 'pair' },
      });

      // Administrators only.
      const user = await signIn(service);
      expect((await service.as(undefined, 'GET', '/api/admin/audit')).json).toEqual({
        error: messages.unauthenticated,
      });
      const refused = await service.as(user, 'GET', '/api/admin/audit');
      expect([refused.status, refused.json]).toEqual([403, { error: messages.forbidden }]);
    },
  );

  it(
    'records logouts and every kind of session ending, with ' +
      'who ended them; filters by type and email and pages',
    async () => {
      const service = await start({ SESSION_STORE: store, SESSION_MAX_PER_USER: '3' });
      const admin = await signIn(service, ADMIN);
      // A minute between steps: more than 5 events of a type from one address in a minute would be
      // counted, not kept one by one.
      const nextMinute = () => service.advance(60);

      expect((await service.logout(await signIn(service))).status).toBe(200);
      const mine = await signIn(service);
      await signIn(service);
      const otherId = await sessionId(service, mine, false);
      expect((await service.as(mine, 'DELETE', `/api/sessions/${otherId}`)).json).toEqual(ONE);
      nextMinute();
      await signIn(service);
      expect((await service.as(mine, 'DELETE', '/api/sessions')).json).toEqual(ONE);
      const endedId = await sessionId(service, await signIn(service));
      expect((await service.as(admin, 'DELETE', `/api/admin/sessions/${endedId}`)).json).toEqual(
        ONE,
      );
      nextMinute();
      // A new login in a browser that holds a session replaces it.
      const replaced = tokenFrom(await service.login(USER, mine));
      // Past SESSION_MAX_PER_USER (3), the account's oldest ends.
      for (let login = 0; login < 3; login++) await signIn(service);
      expect((await service.as(admin, 'DELETE', '/api/admin/users/1/sessions')).json).toEqual({
        ended: 3,
      });
      expect((await service.me(replaced)).status).toBe(401);
      nextMinute();

      const ofUser = async (type: string) =>
        (await allEvents(service, admin, `&type=${type}`)).map(({ email, userId, detail }) => {
          expect([email, userId]).toEqual([USER.email, '1']);
          return detail;
        });
      expect(await ofUser('session.ended')).toEqual([
        { by: 'admin', adminId: '2', ended: 3 },
        { by: 'cap', cap: 'SESSION_MAX_PER_USER', ended: 1 },
        { by: 'login', ended: 1 },
        { by: 'admin', adminId: '2', ended: 1 },
        { by: 'owner', ended: 1 },
        { by: 'owner', ended: 1 },
      ]);
      expect(await ofUser('logout')).toEqual([{}]);

      // Whatever the letter case of the email; a page at a time, each page's `next` the `before` of
      // the following one.
      const users = await allEvents(
        service,
        admin,
        `&email=${encodeURIComponent(USER.email.toUpperCase())}`,
      );
      expect(users.length).toBe(6 + 1 + 9);
      expect(users.every((event) => event.userId === '1')).toBe(true);
      const first = await auditPage(service, admin, `?limit=4&email=${USER.email}`);
      const second = await auditPage(
        service,
        admin,
        `?limit=4&email=${USER.email}&before=${first.next}`,
      );
      expect([...first.events, ...second.events]).toEqual(users.slice(0, 8));
      expect(first.next).toBe(first.events[3]!.id);
      expect((await auditPage(service, admin, '?limit=1')).events).toHaveLength(1);

      for (const query of [
        'limit=0',
        'limit=101',
        'limit=ten',
        'before=-1',
        'type=login.maybe',
        'email=%00',
      ]) {
        const invalid = await service.as(admin, 'GET', `/api/admin/audit?${query}`);
        expect([query, invalid.status]).toEqual([query, 400]);
        expect((invalid.json as { error: string }).error).toMatch(/^(limit|before|type|email) /);
      }
    },
  );
});
