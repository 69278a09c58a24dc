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
  const startService = (env: Record<string, string> = {}) =>
    start({ SESSION_STORE: store, ...env });

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
