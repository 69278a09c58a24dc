import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditRing, type NewAuditEvent } from '../../server/auth/auditLog.js';
import { EventRate, MANY_ADDRESSES } from '../../server/auth/auditRate.js';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, START, tokenFrom, USER, useAuthService } from '../support/authClient.js';
import { allEvents, attempt, auditPage, eventLines } from '../support/audit.js';
import { advanceClock, setClock } from '../support/clock.js';
import { sessionId } from './attempts.js';

// What the audit trail records, how administrators read it, and what bounds it under a flood.
const { start } = useAuthService();
const ONE = { ended: 1 };

describe.each(['memory', 'postgres'])('the audit trail with SESSION_STORE=%s', (store) => {
  it('records each login outcome, newest first, for administrators only, no secret', async () => {
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
    const ids = events.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const byRequest = (requestId: string) => events.find((event) => event.requestId === requestId);
    const fromTheBrowser = { address: '127.0.0.1', userAgent: 'Audit/1.0' };
    expect(byRequest('req-ok')).toEqual({
      ...{ id: expect.any(Number), time: '2030-01-01T00:00:00.000Z', type: 'login.succeeded' },
      ...{ email: USER.email, userId: '1', ...fromTheBrowser, requestId: 'req-ok' },
      detail: { trustedDevice: false },
    });
    expect(byRequest('req-wrong')).toMatchObject({
      ...{ type: 'login.failed', email: USER.email, userId: '1', ...fromTheBrowser },
      detail: { reason: 'wrong password' },
    });
    expect(byRequest('req-unknown')).toMatchObject({
      ...{ type: 'login.failed', email: 'nobody@example.com', userId: null, ...fromTheBrowser },
      detail: { reason: 'unknown email' },
    });
    expect(byRequest('req-throttled')).toMatchObject({
      ...{ type: 'login.throttled', email: ADMIN.email, userId: '2', address: '127.0.0.2' },
      userAgent: 'Audit/1.0',
      detail: { limit: 'pair', retryAfterSeconds: Number(throttled.headers['retry-after']) },
    });
    const adminFailures = events.filter(
      (event) => event.type === 'login.failed' && event.address === '127.0.0.2',
    );
    expect(adminFailures).toHaveLength(5);

    // Nothing the clients sent as a secret is kept or logged, and every line is short.
    const guesses = Array.from({ length: 7 }, (_, i) => `wrong-guess-${i + 1}`);
    const secrets = [USER.password, ADMIN.password, token, admin, ...guesses];
    for (const secret of secrets) expect(JSON.stringify(events)).not.toContain(secret);
    const lines = eventLines(service);
    expect(lines.map((line) => line.event)).toContain('login.throttled');
    for (const line of lines) {
      for (const secret of secrets) expect(JSON.stringify(line)).not.toContain(secret);
      expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(400);
    }
    expect(lines.find((line) => line.reqId === 'req-throttled')).toMatchObject({
      ...{ level: 40, event: 'login.throttled', userId: '2' },
      detail: { limit: 'pair' },
    });

    // Administrators only.
    const user = await signIn(service);
    expect((await service.as(undefined, 'GET', '/api/admin/audit')).json).toEqual({
      error: messages.unauthenticated,
    });
    const refused = await service.as(user, 'GET', '/api/admin/audit');
    expect([refused.status, refused.json]).toEqual([403, { error: messages.forbidden }]);
  });

  it('records logouts and every session ending with who ended it; filters and pages', async () => {
    const service = await start({ SESSION_STORE: store, SESSION_MAX_PER_USER: '3' });
    const admin = await signIn(service, ADMIN);
    // A minute between steps: more than 5 events of a type from one address in a minute would be
    // counted, not kept one by one.
    const nextMinute = () => service.advance(60);
    const end = async (token: string, path: string) =>
      (await service.as(token, 'DELETE', path)).json;

    expect((await service.logout(await signIn(service))).status).toBe(200);
    const mine = await signIn(service);
    await signIn(service);
    const otherId = await sessionId(service, mine, false);
    expect(await end(mine, `/api/sessions/${otherId}`)).toEqual(ONE);
    nextMinute();
    await signIn(service);
    expect(await end(mine, '/api/sessions')).toEqual(ONE);
    const endedId = await sessionId(service, await signIn(service));
    expect(await end(admin, `/api/admin/sessions/${endedId}`)).toEqual(ONE);
    nextMinute();
    // A new login in a browser that holds a session replaces it.
    const replaced = tokenFrom(await service.login(USER, mine));
    // Past SESSION_MAX_PER_USER (3), the account's oldest ends.
    for (let login = 0; login < 3; login++) await signIn(service);
    expect(await end(admin, '/api/admin/users/1/sessions')).toEqual({ ended: 3 });
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
    const email = encodeURIComponent(USER.email.toUpperCase());
    const users = await allEvents(service, admin, `&email=${email}`);
    expect(users.length).toBe(6 + 1 + 9);
    expect(users.every((event) => event.userId === '1')).toBe(true);
    const first = await auditPage(service, admin, `?limit=4&email=${USER.email}`);
    const query = `?limit=4&email=${USER.email}&before=${first.next}`;
    const second = await auditPage(service, admin, query);
    expect([...first.events, ...second.events]).toEqual(users.slice(0, 8));
    expect(first.next).toBe(first.events[3]!.id);
    expect((await auditPage(service, admin, '?limit=1')).events).toHaveLength(1);

    const refused = 'limit=0 limit=101 limit=ten before=-1 type=login.maybe email=%00';
    for (const query of refused.split(' ')) {
      const invalid = await service.as(admin, 'GET', `/api/admin/audit?${query}`);
      expect([query, invalid.status]).toEqual([query, 400]);
      expect((invalid.json as { error: string }).error).toMatch(/^(limit|before|type|email) /);
    }
  });

  it("cuts log lines under 500 bytes; files an account's attempts by address", async () => {
    const service = await start({ SESSION_STORE: store });
    const email = `${'電'.repeat(240)}@example.com`;
    const [requestId, userAgent] = ['r'.repeat(128), 'Mozilla/5.0 '.repeat(30)];
    await attempt(service, { email, password: 'wrong' }, requestId, '127.0.0.1', userAgent);
    // What a line repeats of the client's text is cut, but the request id.
    const [line] = eventLines(service);
    expect(line).toMatchObject({
      event: 'login.failed',
      email: expect.stringMatching(/^電+…$/),
      reqId: requestId,
    });
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(500);

    // Every attempt on an account filed under it, whatever the address sent before; a summary of
    // unknown emails names none.
    const from = '127.0.7.1';
    const wrong = (email: string, requestId: string) =>
      attempt(service, { email, password: 'wrong' }, requestId, from);
    for (let i = 0; i < 6; i++) await wrong(ADMIN.email, `decoy-${i}`);
    for (let i = 0; i < 6; i++) await wrong('admin@example.org', `other-${i}`);
    service.advance(60);
    const admin = await signIn(service, ADMIN);
    const events = (query: string) => allEvents(service, admin, query);
    const failed = await events('&type=login.failed');
    expect(failed.find((event) => event.requestId === requestId)).toMatchObject({
      email,
      userAgent: userAgent.slice(0, 256),
    });
    const filed = await events(`&email=${ADMIN.email}&type=login.failed`);
    expect(filed.map(({ address, detail }) => [address, detail.count])).toEqual(
      Array(5).fill([from, undefined]),
    );
    const [throttled] = await events(`&email=${ADMIN.email}&type=login.throttled`);
    expect([throttled?.address, throttled?.userId]).toEqual([from, '2']);
    const unknown = failed.filter((event) => event.userId === null && event.address === from);
    expect(unknown.map((event) => [event.email, event.detail.count])).toEqual([
      [null, 1],
      ...Array(5).fill(['admin@example.org', undefined]),
    ]);
  });
});

describe('the parts of the audit trail a flood presses on', () => {
  beforeEach(() => setClock(START));
  afterEach(() => vi.useRealTimers());
  const event = (requestId: string, address = '127.0.0.1'): NewAuditEvent => ({
    ...{ time: new Date().toISOString(), type: 'login.failed', email: null, userId: null },
    ...{ address, userAgent: 'test', requestId, detail: { reason: 'unknown email' } },
  });

  it('the memory ring holds at most its count, none past retention, newest first', async () => {
    const ring = new AuditRing({ retentionDays: 1, maxEvents: 10 });
    for (let n = 1; n <= 1_000; n++) {
      ring.keep([event(`r${n}`)]);
      expect(ring.size).toBeLessThanOrEqual(10);
    }
    const newest = Array.from({ length: 10 }, (_, i) => `r${1_000 - i}`);
    expect((await ring.list({ limit: 100 })).map((kept) => kept.requestId)).toEqual(newest);
    const page = await ring.list({ limit: 3, before: 995 });
    expect(page.map((kept) => kept.id)).toEqual([994, 993, 992]);
    advanceClock(24 * 3600 + 0.001);
    expect(await ring.list({ limit: 100 })).toEqual([]);
    expect(ring.size).toBe(0);
  });

  it('counts the events of addresses past the clients a window tracks together, as from *', () => {
    const rate = new EventRate({ perClient: 1, windowMs: 60_000, maxClients: 2 });
    const kept = ['a', 'b', 'c', 'd', 'e', 'a'].flatMap((client, i) =>
      rate.take(event(`r${i}`, client), client),
    );
    expect(kept.map((one) => one.requestId)).toEqual(['r0', 'r1']);
    expect(rate.ended()).toEqual([]);
    advanceClock(60);
    const ended = rate
      .ended()
      .map(({ address, requestId, detail }) => [address, requestId, detail]);
    expect(ended).toEqual([
      ['a', 'r5', { reason: 'unknown email', count: 1 }],
      [MANY_ADDRESSES, 'r2', { reason: 'unknown email', count: 3 }],
    ]);
  });
});
