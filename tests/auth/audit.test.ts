import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditRing, type NewAuditEvent } from '../../server/auth/auditLog.js';
import { EventRate, MANY_ADDRESSES } from '../../server/auth/auditRate.js';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, START, tokenFrom, USER, useAuthService } from '../support/authClient.js';
import { advanceClock, setClock } from '../support/clock.js';
import { allEvents, attempt, auditPage, eventLines } from '../support/audit.js';

const { start } = useAuthService();

describe.each(['memory', 'postgres'])('the audit trail with SESSION_STORE=%s', (store) => {
  const startService = (env: Record<string, string> = {}) =>
    start({ SESSION_STORE: store, ...env });

  it(
    'records each login outcome with its fields, newest ' +
      'first, for administrators only, and never a secret',
    async () => {
      const service = await startService();
      const succeeded = await attempt(service, USER, 'req-ok');
      const token = tokenFrom(succeeded);
      expect(
        (await attempt(service, { email: USER.email, password: 'wrong-guess-1' }, 'req-wrong'))
          .status,
      ).toBe(401);
      expect(
        (
          await attempt(
            service,
            { email: 'Nobody@Example.com', password: 'wrong-guess-2' },
            'req-unknown',
          )
        ).status,
      ).toBe(401);
      for (let failure = 1; failure <= 5; failure++)
        await attempt(
          service,
          { email: ADMIN.email, password: `wrong-guess-${failure + 2}` },
          `req-admin-${failure}`,
          '127.0.0.2',
        );
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
      const service = await startService({ SESSION_MAX_PER_USER: '3' });
      const admin = await signIn(service, ADMIN);
      const sessionsOf = async (token: string) =>
        (
          (await service.as(token, 'GET', '/api/sessions')).json as {
            sessions: { id: string; current: boolean }[];
          }
        ).sessions;
      // A minute between steps: more than 5 events of a type from one address in a minute would be
      // counted, not kept one by one.
      const nextMinute = () => service.advance(60);

      expect((await service.logout(await signIn(service))).status).toBe(200);
      const mine = await signIn(service);
      await signIn(service);
      const otherId = (await sessionsOf(mine)).find((session) => !session.current)!.id;
      expect((await service.as(mine, 'DELETE', `/api/sessions/${otherId}`)).json).toEqual({
        ended: 1,
      });
      nextMinute();
      await signIn(service);
      expect((await service.as(mine, 'DELETE', '/api/sessions')).json).toEqual({ ended: 1 });
      const ended = await signIn(service);
      const endedId = (await sessionsOf(ended)).find((session) => session.current)!.id;
      expect((await service.as(admin, 'DELETE', `/api/admin/sessions/${endedId}`)).json).toEqual({
        ended: 1,
      });
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

      const endings = await allEvents(service, admin, '&type=session.ended');
      expect(endings.map(({ email, userId, detail }) => ({ email, userId, detail }))).toEqual([
        { email: USER.email, userId: '1', detail: { by: 'admin', adminId: '2', ended: 3 } },
        {
          email: USER.email,
          userId: '1',
          detail: { by: 'cap', cap: 'SESSION_MAX_PER_USER', ended: 1 },
        },
        { email: USER.email, userId: '1', detail: { by: 'login', ended: 1 } },
        { email: USER.email, userId: '1', detail: { by: 'admin', adminId: '2', ended: 1 } },
        { email: USER.email, userId: '1', detail: { by: 'owner', ended: 1 } },
        { email: USER.email, userId: '1', detail: { by: 'owner', ended: 1 } },
      ]);
      const logouts = await allEvents(service, admin, '&type=logout');
      expect(logouts.map(({ email, userId, detail }) => ({ email, userId, detail }))).toEqual([
        { email: USER.email, userId: '1', detail: {} },
      ]);

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

  it(
    'files every attempt on an account under it with its address, whatever ' +
      'the address sent before; a summary of unknown emails names none',
    async () => {
      const service = await startService();
      const from = '127.0.7.1';
      for (let i = 0; i < 6; i++)
        await attempt(service, { email: ADMIN.email, password: 'wrong' }, `decoy-${i}`, from);
      for (let i = 0; i < 6; i++)
        await attempt(
          service,
          { email: 'admin@example.org', password: 'wrong' },
          `other-${i}`,
          from,
        );
      service.advance(60);
      const admin = await signIn(service, ADMIN);
      const filed = await allEvents(service, admin, `&email=${ADMIN.email}&type=login.failed`);
      expect(filed.map(({ address, detail }) => [address, detail.count])).toEqual(
        Array(5).fill([from, undefined]),
      );
      const [throttled] = await allEvents(
        service,
        admin,
        `&email=${ADMIN.email}&type=login.throttled`,
      );
      expect([throttled?.address, throttled?.userId]).toEqual([from, '2']);
      const unknown = await allEvents(service, admin, '&type=login.failed');
      expect(
        unknown
          .filter(({ userId }) => userId === null)
          .map(({ email, detail }) => [email, detail.count]),
      ).toEqual([[null, 1], ...Array(5).fill(['admin@example.org', undefined])]);
    },
  );

  it(
    "cuts what a log line repeats of the client's text but " +
      'the request id, so that a line stays under 500 bytes',
    async () => {
      const service = await startService();
      const email = `${'電'.repeat(240)}@example.com`;
      const userAgent = 'Mozilla/5.0 '.repeat(30);
      await attempt(service, { email, password: 'wrong' }, 'r'.repeat(128), '127.0.0.1', userAgent);
      const [line] = eventLines(service);
      expect(line).toMatchObject({
        event: 'login.failed',
        email: expect.stringMatching(/^電+…$/),
        reqId: 'r'.repeat(128),
      });
      expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(500);
      const admin = await signIn(service, ADMIN);
      const [event] = await allEvents(service, admin, '&type=login.failed');
      expect(event).toMatchObject({
        email,
        requestId: 'r'.repeat(128),
        userAgent: userAgent.slice(0, 256),
      });
    },
  );
});

describe('the parts of the audit trail a flood presses on', () => {
  beforeEach(() => setClock(START));
  afterEach(() => vi.useRealTimers());
  const event = (requestId: string, address = '127.0.0.1'): NewAuditEvent => ({
    time: new Date().toISOString(),
    type: 'login.failed',
    email: null,
    userId: null,
    address,
    userAgent: 'test',
    requestId,
    detail: { reason: 'unknown email' },
  });

  it(
    'the memory ring never holds more than its count, nor ' +
      'an event past the retention, and lists newest first',
    async () => {
      const ring = new AuditRing({ retentionDays: 1, maxEvents: 10 });
      for (let n = 1; n <= 1_000; n++) {
        ring.keep([event(`r${n}`)]);
        expect(ring.size).toBeLessThanOrEqual(10);
      }
      expect((await ring.list({ limit: 100 })).map((kept) => kept.requestId)).toEqual(
        Array.from({ length: 10 }, (_, i) => `r${1_000 - i}`),
      );
      expect((await ring.list({ limit: 3, before: 995 })).map((kept) => kept.id)).toEqual([
        994, 993, 992,
      ]);
      advanceClock(24 * 3600 + 0.001);
      expect(await ring.list({ limit: 100 })).toEqual([]);
      expect(ring.size).toBe(0);
    },
  );

  it('counts the events of addresses past the clients a window tracks together, as from *', () => {
    const rate = new EventRate({ perClient: 1, windowMs: 60_000, maxClients: 2 });
    const kept = ['a', 'b', 'c', 'd', 'e', 'a'].flatMap((client, i) =>
      rate.take(event(`r${i}`, client), client),
    );
    expect(kept.map((one) => one.requestId)).toEqual(['r0', 'r1']);
    expect(rate.ended()).toEqual([]);
    advanceClock(60);
    expect(
      rate.ended().map(({ address, requestId, detail }) => ({ address, requestId, detail })),
    ).toEqual([
      { address: 'a', requestId: 'r5', detail: { reason: 'unknown email', count: 1 } },
      { address: MANY_ADDRESSES, requestId: 'r2', detail: { reason: 'unknown email', count: 3 } },
    ]);
  });
});
