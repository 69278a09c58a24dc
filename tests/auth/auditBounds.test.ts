import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditRing, type NewAuditEvent } from '../../server/auth/auditLog.js';
import { EventRate, MANY_ADDRESSES } from '../../server/auth/auditRate.js';
import { ADMIN, signIn, START, useAuthService } from '../support/authClient.js';
import { advanceClock, setClock } from '../support/clock.js';
import { allEvents, attempt, eventLines } from '../support/audit.js';

// What bounds the audit trail a flood presses on: summaries past the rate, log lines cut to size,
// the ring's count and retention.
const { start } = useAuthService();

describe.each(['memory', 'postgres'])('the audit trail with SESSION_STORE=%s', (store) => {
  it(
    "cuts what a log line repeats of the client's text but the request id, to under 500 bytes; " +
      'files every attempt on an account under it with its address, whatever the address ' +
      'sent before; a summary of unknown emails names none',
    async () => {
      const service = await start({ SESSION_STORE: store });
      const email = `${'電'.repeat(240)}@example.com`;
      const [requestId, userAgent] = ['r'.repeat(128), 'Mozilla/5.0 '.repeat(30)];
      await attempt(service, { email, password: 'wrong' }, requestId, '127.0.0.1', userAgent);
      const [line] = eventLines(service);
      expect(line).toMatchObject({
        event: 'login.failed',
        email: expect.stringMatching(/^電+…$/),
        reqId: requestId,
      });
      expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(500);

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
