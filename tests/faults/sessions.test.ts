import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { User } from '../../server/auth/accounts.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { MemorySessionStore } from '../../server/auth/sessions.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { send } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { startTestService } from '../support/services.js';
import { heapMiB } from './heap.js';
import { expectChecks } from '../support/checks.js';
import { advanceClock, setClock } from '../support/clock.js';

// The in-memory session table under pressure, first through the store the login service uses,
// then through the login API itself.

/**
 * Issued tokens kept outside the JS heap (16 bytes each in a Buffer), so that holding them to
 * check later does not weigh on the heap figures that show the store's own memory.
 */
class TokenList {
  #bytes: Buffer;
  length = 0;

  constructor(capacity: number) {
    this.#bytes = Buffer.alloc(capacity * 16);
  }

  push(token: string) {
    this.#bytes.write(token.replaceAll('-', ''), this.length++ * 16, 'hex');
  }

  at(index: number): string {
    const hex = this.#bytes.toString('hex', index * 16, index * 16 + 16);
    return [
      hex.slice(0, 8),
      hex.slice(8, 12),
      hex.slice(12, 16),
      hex.slice(16, 20),
      hex.slice(20),
    ].join('-');
  }

  /** Whether `test` holds for every token in [from, to). */
  async every(
    from: number,
    to: number,
    test: (token: string) => Promise<boolean>,
  ): Promise<boolean> {
    for (let i = from; i < to; i++) if (!(await test(this.at(i)))) return false;
    return true;
  }
}

const TTL_SECONDS = 3600;
/** The account's credential generation, which never changes here. */
const GENERATION = 1;
const user: User = { id: '1', email: 'user@example.com', role: 'user' };
const client = {
  address: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0',
};

describe('sessions under pressure', () => {
  const max = 20_000;
  test(`${max} sessions: the cap evicts oldest first, others resolve, expired go`, async () => {
    const step = max / 2;
    const steps = 4;
    const overflow = step * steps;
    setClock(Date.UTC(2026, 0, 1));
    // One account here: its own cap is lifted so that the global one is what is pushed on.
    const store = new MemorySessionStore({
      ttlSeconds: TTL_SECONDS,
      max,
      maxPerUser: max,
    });
    const heapEmpty = heapMiB();

    const tokens = new TokenList(max + overflow);
    for (let i = 0; i < max; i++) {
      tokens.push((await store.create(user, client, GENERATION)).token);
      advanceClock(0.001);
    }
    const heapFull = heapMiB();
    const allResolve = await tokens.every(
      0,
      max,
      async (token) => (await store.find(token))?.userId === user.id,
    );

    // Past the cap, the heap is sampled after each step: bounded means it stops growing.
    const heapPastCap: number[] = [];
    for (let k = 0; k < steps; k++) {
      for (let i = 0; i < step; i++) {
        tokens.push((await store.create(user, client, GENERATION)).token);
        advanceClock(0.001);
      }
      heapPastCap.push(heapMiB());
    }
    const heapOverflowed = Math.max(...heapPastCap);
    const evictedGone = await tokens.every(
      0,
      overflow,
      async (token) => (await store.find(token)) === undefined,
    );
    const keptResolve = await tokens.every(
      overflow,
      tokens.length,
      async (token) => (await store.find(token)) !== undefined,
    );

    // Logout: the token is gone at once.
    const loggedOut = { from: overflow, to: overflow + 1000 };
    await tokens.every(
      loggedOut.from,
      loggedOut.to,
      async (token) => (await store.remove(token), true),
    );
    const logoutRefused = await tokens.every(
      loggedOut.from,
      loggedOut.to,
      async (token) => (await store.find(token)) === undefined,
    );

    // Expiry: past the TTL nothing resolves; the next login sweeps the whole table.
    advanceClock(TTL_SECONDS);
    const expiredRefused = await tokens.every(
      tokens.length - 1000,
      tokens.length,
      async (token) => (await store.find(token)) === undefined,
    );
    const { token: fresh } = await store.create(user, client, GENERATION);
    const heapSwept = heapMiB();
    const freshResolves = (await store.find(fresh)) !== undefined;

    const growthOverCap = (heapOverflowed - heapEmpty) / (heapFull - heapEmpty);
    const checks = {
      [`all ${max} resolve`]: allResolve,
      [`the oldest ${overflow} were evicted, the newest ${max} still resolve`]:
        evictedGone && keptResolve,
      // A Map may double its backing table once past the cap; without a cap the heap would grow
      // with every session.
      'memory stays bounded past the cap (< ×1.6 the full table)': growthOverCap < 1.6,
      'a logged-out token is refused': logoutRefused,
      'an expired token is refused': expiredRefused,
      'the sweep gives the memory back (< 20% of the full table left)':
        heapSwept - heapEmpty < 0.2 * (heapFull - heapEmpty),
      'a new session after the sweep resolves': freshResolves,
    };
    expectChecks(checks);
  }, 120_000);

  describe('through the login API', () => {
    const sessionMax = 100;
    let service: StartedService<AuthDeps>;

    beforeAll(async () => {
      await ensureSpaBuilt();
      const { auth: config } = loadConfig({
        PASSWORD_HASH_COST: '4',
        SESSION_MAX: String(sessionMax),
        SESSION_MAX_PER_USER: String(sessionMax),
      });
      service = await startTestService(auth, {
        deps: { config, spa: await builtSpa() },
        logLevel: 'warn',
      });
    }, 180_000);

    afterAll(async () => {
      await service?.close();
    });

    const credentials = { email: 'user@example.com', password: 'user-password' };

    async function login(cookie?: string): Promise<string> {
      const response = await service.request('POST', '/api/login', {
        json: credentials,
        headers: cookie ? { cookie } : {},
      });
      expect(response.status).toBe(200);
      return /token=([^;]+)/.exec(String(response.headers['set-cookie']))![1];
    }

    async function me(token: string) {
      const response = await service.request('GET', '/api/me', {
        headers: { cookie: `token=${token}` },
      });
      return { status: response.status, body: response.json };
    }

    async function dashboard(token: string) {
      const response = await send(service.url, {
        method: 'GET',
        path: '/dashboard',
        headers: { cookie: `token=${token}` },
      });
      return `${response.status} ${response.headers.location ?? ''}`.trim();
    }

    test('eviction, logout, expiry and a login holding a cookie, as clients see them', async () => {
      const evictions = 10;
      const tokens: string[] = [];
      for (let i = 0; i < sessionMax + evictions; i++) tokens.push(await login());
      const invalid = { status: 401, body: { error: 'invalid session' } };

      const evicted = await Promise.all(tokens.slice(0, evictions).map(me));
      const kept = await Promise.all(tokens.slice(evictions).map(me));
      const evictedRefused = evicted.every(
        (answer) => JSON.stringify(answer) === JSON.stringify(invalid),
      );
      const keptResolve = kept.every((answer) => answer.status === 200);
      const evictedDashboard = await dashboard(tokens[0]);

      const held = tokens.at(-1)!;
      const renewed = await login(`token=${held}`);
      const fixationRefused =
        renewed !== held && (await me(held)).status === 401 && (await me(renewed)).status === 200;

      const logout = await service.request('POST', '/api/logout', {
        headers: { cookie: `token=${renewed}` },
      });
      const logoutRefused =
        logout.status === 200 && JSON.stringify(await me(renewed)) === JSON.stringify(invalid);
      const loggedOutDashboard = await dashboard(renewed);

      const beforeExpiry = await login();
      advanceClock(TTL_SECONDS);
      const expiredRefused = JSON.stringify(await me(beforeExpiry)) === JSON.stringify(invalid);
      const expiredDashboard = await dashboard(beforeExpiry);

      const checks = {
        'evicted tokens refused (401 invalid session), oldest first': evictedRefused,
        'every other session resolves': keptResolve,
        'login holding a cookie issues a fresh token and ends the old one': fixationRefused,
        'a logged-out token is refused': logoutRefused,
        'an expired token is refused': expiredRefused,
        '/dashboard redirects to /login for evicted, logged-out and expired tokens': [
          evictedDashboard,
          loggedOutDashboard,
          expiredDashboard,
        ].every((answer) => answer === '302 /login'),
      };
      expectChecks(checks);
    }, 120_000);
  });
});
