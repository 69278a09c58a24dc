import { describe, expect, it } from 'vitest';
import { MANY_ADDRESSES } from '../../server/auth/auditRate.js';
import { allEvents, attempt, eventLines } from '../support/audit.js';
import { ADMIN, signIn, useAuthService } from '../support/authClient.js';

// Floods of login attempts on the audit trail: thousands of requests each, so they run here. The
// audit trail is one ring per process whatever the store: a flood presses on it alike.

const { start } = useAuthService();

describe('the audit trail under a flood', () => {
  it(
    'keeps a flood within its bounds: a few events per type and address each ' +
      'minute, a summary counting the rest, at most AUDIT_MAX_EVENTS in all',
    async () => {
      const service = await start({ AUDIT_MAX_EVENTS: '20' });
      const addresses = ['127.0.9.1', '127.0.9.2', '127.0.9.3', '127.0.9.4'];
      const answers = new Map<string, number>();
      // Two attempts at once from each address (its limit), 500 from each: 50 are checked, the
      // rest refused by its budget.
      await Promise.all(
        addresses.flatMap((address) =>
          [0, 1].map(async (lane) => {
            for (let i = 0; i < 250; i++) {
              const credentials = { email: `flood-${lane}-${i}@example.com`, password: 'wrong' };
              const id = `flood-${address}-${lane}-${i}`;
              const { status } = await attempt(service, credentials, id, address);
              answers.set(`${status} ${address}`, (answers.get(`${status} ${address}`) ?? 0) + 1);
            }
          }),
        ),
      );
      for (const address of addresses)
        expect([answers.get(`401 ${address}`), answers.get(`429 ${address}`)]).toEqual([50, 450]);
      // 5 events of each type from each address, one by one; their window's summaries are kept
      // once it ends.
      expect(eventLines(service)).toHaveLength(addresses.length * 2 * 5);
      service.advance(60);
      const events = await allEvents(service, await signIn(service, ADMIN));
      expect(events.length).toBeLessThanOrEqual(20);
      const summaries = events.filter((event) => event.detail.count !== undefined);
      expect(
        summaries.map(({ type, address, detail }) => `${type} ${address} ${detail.count}`).sort(),
      ).toEqual(
        addresses
          .flatMap((address) => [`login.failed ${address} 45`, `login.throttled ${address} 445`])
          .sort(),
      );
      expect(eventLines(service)).toHaveLength(addresses.length * 2 * 6 + 1);
    },
  );

  it("keeps every other client's address while 1,001 addresses fail at once", async () => {
    const service = await start();
    const addresses = Array.from({ length: 1_001 }, (_, i) => `127.1.${i >> 8}.${i & 255}`);
    const wrong = { email: 'nobody@example.com', password: 'wrong' };
    for (let next = 0; next < addresses.length; next += 16)
      await Promise.all(
        addresses
          .slice(next, next + 16)
          .map((address) => attempt(service, wrong, address, address)),
      );
    await attempt(service, { email: ADMIN.email, password: 'wrong' }, 'admin', '127.0.8.1');
    const admin = await signIn(service, ADMIN);
    expect((await service.as(admin, 'DELETE', '/api/admin/users/1/throttle')).status).toBe(200);
    service.advance(60);
    const events = await allEvents(service, admin);
    const addressOf = (type: string, userId: string | null) =>
      events
        .filter((event) => event.type === type && event.userId === userId)
        .map(({ address, detail }) => `${address} ${detail.count ?? ''}`.trim());
    expect(addressOf('login.failed', '2')).toEqual(['127.0.8.1']);
    expect(addressOf('account.unlocked', '1')).toEqual(['127.0.0.1']);
    expect(addressOf('login.failed', null)).toContain(`${MANY_ADDRESSES} 1`);
  }, 60_000);
});
