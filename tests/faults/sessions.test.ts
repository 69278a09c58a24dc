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
 * Issued tokens (UUIDs) kept outside the JS heap, 16 bytes each in a Buffer, so that holding them
 * to check later does not weigh on the heap figures that show the store's own memory.
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
  /** Whether `test` holds for every token in [from, to). */
  async every(from: number, to: number, test: (token: string) => Promise<boolean>) {
    for (let i = from; i < to; i++) {
      const hex = this.#bytes.toString('hex', i * 16, i * 16 + 16);
      if (!(await test(hex.replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')))) return false;
    }
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
    const overflow = step * 4;
    setClock(Date.UTC(2026, 0, 1));
    // One account here: its own cap is lifted so that the global one is what is pushed on.
    const store = new MemorySessionStore({
      ttlSeconds: TTL_SECONDS,
      max,
      maxPerUser: max,
    });
    const tokens = new TokenList(max + overflow);
    const login = async (count: number) => {
      for (let i = 0; i < count; i++) {
        tokens.push((await store.create(user, client, GENERATION)).token);
        advanceClock(0.001);
      }
    };
    const resolve = (from: number, to: number) =>
      tokens.every(from, to, async (token) => (await store.find(token))?.userId === user.id);
    const refused = (from: number, to: number) =>
      tokens.every(from, to, async (token) => (await store.find(token)) === undefined);

    const heapEmpty = heapMiB();
    await login(max);
    const heapFull = heapMiB();
    const allResolve = await resolve(0, max);
    // Past the cap, the heap is sampled after each step: bounded means it stops growing.
    const heapPastCap: number[] = [];
    while (tokens.length < max + overflow) {
      await login(step);
      heapPastCap.push(heapMiB());
    }
    const evictedGone = await refused(0, overflow);
    const keptResolve = await resolve(overflow, tokens.length);
    // Logout: the token is gone at once.
    await tokens.every(
      overflow,
      overflow + 1000,
      async (token) => (await store.remove(token), true),
    );
    const logoutRefused = await refused(overflow, overflow + 1000);
    // Expiry: past the TTL nothing resolves; the next login sweeps the whole table.
    advanceClock(TTL_SECONDS);
    const expiredRefused = await refused(tokens.length - 1000, tokens.length);
    const { token: fresh } = await store.create(user, client, GENERATION);
    const heapSwept = heapMiB();

    const growthOverCap = (Math.max(...heapPastCap) - heapEmpty) / (heapFull - heapEmpty);
    expectChecks({
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
      'a new session after the sweep resolves': (await store.find(fresh)) !== undefined,
    });
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
    afterAll(() => service?.close());

    async function login(cookie?: string): Promise<string> {
      const response = await service.request('POST', '/api/login', {
        json: { email: 'user@example.com', password: 'user-password' },
        headers: cookie ? { cookie } : {},
      });
      expect(response.status).toBe(200);
      return /token=([^;]+)/.exec(String(response.headers['set-cookie']))![1]!;
    }
    const cookie = (token: string) => ({ cookie: `token=${token}` });
    const me = async (token: string) => {
      const response = await service.request('GET', '/api/me', {
        headers: cookie(token),
      });
      return { status: response.status, body: response.json };
    };
    /** Whether the API refuses the token as an invalid session, and the page sends to /login. */
    const refused = async (token: string) => {
      const page = await send(service.url, {
        method: 'GET',
        path: '/dashboard',
        headers: cookie(token),
      });
      return {
        api:
          JSON.stringify(await me(token)) === '{"status":401,"body":{"error":"invalid session"}}',
        page: `${page.status} ${page.headers.location}` === '302 /login',
      };
    };

    test('eviction, logout, expiry and a login holding a cookie, as clients see them', async () => {
      const evictions = 10;
      const tokens: string[] = [];
      for (let i = 0; i < sessionMax + evictions; i++) tokens.push(await login());
      const evicted = await Promise.all(tokens.slice(0, evictions).map(refused));
      const kept = await Promise.all(tokens.slice(evictions).map(me));

      const held = tokens.at(-1)!;
      const renewed = await login(`token=${held}`);
      const fixationRefused =
        renewed !== held && (await me(held)).status === 401 && (await me(renewed)).status === 200;
      const logout = await service.request('POST', '/api/logout', {
        headers: cookie(renewed),
      });
      const loggedOut = await refused(renewed);
      const beforeExpiry = await login();
      advanceClock(TTL_SECONDS);
      const expired = await refused(beforeExpiry);

      expectChecks({
        'evicted tokens refused (401 invalid session), oldest first': evicted.every((e) => e.api),
        'every other session resolves': kept.every((answer) => answer.status === 200),
        'login holding a cookie issues a fresh token and ends the old one': fixationRefused,
        'a logged-out token is refused': logout.status === 200 && loggedOut.api,
        'an expired token is refused': expired.api,
        '/dashboard redirects to /login for evicted, logged-out and expired tokens':
          evicted[0]!.page && loggedOut.page && expired.page,
      });
    }, 120_000);
  });
});
