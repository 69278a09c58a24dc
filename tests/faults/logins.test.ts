import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { send } from '../../harness/http.js';
import { startReverseProxy } from '../../harness/reverseProxy.js';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/auth/index.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/shared/config.js';
import { heapMiB } from './heap.js';
import { expectChecks, passed, report } from './report.js';
import { scale } from './scale.js';

// Login throttling as an attacker meets it: an account attacked from many addresses while its
// owner logs in, a flood meant to make the table forget a blocked client, and one attacker
// behind the same reverse proxy as everyone else.

const USER = { email: 'user@example.com', password: 'user-password' };
const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let spa: Spa;

beforeAll(async () => {
  await ensureSpaBuilt();
  spa = await builtSpa();
});
afterAll(() => spa?.close());

/** The login service on a clock the test moves; a tiny scrypt cost, so that floods are fast. */
async function loginService(env: Record<string, string> = {}) {
  let time = Date.UTC(2030, 0, 1);
  const config = loadConfig({ PASSWORD_HASH_COST: '2', ...env });
  const service = await startService(auth, { deps: { config: config.auth, spa, now: () => time }, edge: config.edge.auth, logLevel: 'warn' });
  return { service, advance: (ms: number) => void (time += ms) };
}

const attempt = (service: StartedService<AuthDeps>, credentials: { email: string; password: string }, from: string, headers: Record<string, string> = {}) =>
  send(service.url, { method: 'POST', path: '/api/login', json: credentials, localAddress: from, headers });

/** Attempts sent together in the flood, from one address. */
const FLOOD_WAVE = 64;
/** The longest valid email (254 characters), a new one for every `n`. */
const floodEmail = (n: number) => `${String(n).padStart(8, '0')}${'x'.repeat(234)}@example.com`;
/**
 * What the two bounded throttle tables (10,000 keys each) may hold at most, with room for the
 * collector's noise; the flood sends several times as many keys, which unbounded would take twice that.
 */
const TABLES_BOUND_MIB = 16;

const deviceOf = (reply: { headers: http.IncomingHttpHeaders }) =>
  /^device=([^;]+)/.exec((reply.headers['set-cookie'] ?? []).find((line) => line.startsWith('device=')) ?? '')?.[1] ?? '';

describe('login throttling under attack', () => {
  test('an account attacked from many addresses: guesses stay bounded per hour, its owner still gets in', async () => {
    const { service, advance } = await loginService();
    try {
      const owner = await attempt(service, USER, '127.0.9.1');
      const device = deviceOf(owner);
      const hours = scale(2, 6);
      const perHour: number[] = [];
      const ownerAnswers: number[] = [];
      const freshOwner: number[] = [];
      let addresses = 0;
      for (let hour = 0; hour < hours; hour++) {
        let guessed = 0;
        // 600 guesses an hour from ever new addresses, one minute apart in tens.
        for (let minute = 0; minute < 60; minute++) {
          const wave = await Promise.all(Array.from({ length: 10 }, () => attempt(service, { email: USER.email, password: `guess-${Math.random()}` }, `127.1.${(addresses >> 8) & 255}.${addresses++ & 255 || 1}`)));
          guessed += wave.filter((answer) => answer.status === 401).length;
          if (minute % 15 === 7) {
            ownerAnswers.push((await attempt(service, USER, '127.0.9.2', { cookie: `device=${device}` })).status);
            freshOwner.push((await attempt(service, ADMIN, '127.0.9.3')).status);
          }
          advance(60_000);
        }
        perHour.push(guessed);
      }
      const checks = {
        'at most 100 guesses checked in any hour': perHour.every((count) => count <= 100),
        'the owner, from a browser that logged in before, always got in': ownerAnswers.every((status) => status === 200),
        'the other account was not touched': freshOwner.every((status) => status === 200),
      };
      report({
        key: '7a',
        case: '7. An account attacked from many addresses',
        done: `${addresses} attempts with wrong passwords for one account over ${hours} hours (10 a minute, each from a new address), on the app's clock; every 15 minutes its owner logs in from yet another address with the device cookie of an earlier login, and the other account logs in from a fresh address.`,
        expected: 'At most 100 guesses an hour are checked (the rest answer 429); the owner with a device cookie always gets in; the other account is not slowed.',
        observed: `Guesses checked per hour: ${perHour.join(', ')}. The owner's logins: ${ownerAnswers.join(', ')}. The other account's: ${freshOwner.join(', ')}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
    } finally {
      await service.close();
    }
  }, 300_000);

  test('a flood of new addresses and emails cannot make the table forget a blocked client, and memory stays bounded', async () => {
    const { service } = await loginService();
    try {
      for (let attempt5 = 0; attempt5 < 5; attempt5++) await attempt(service, { email: USER.email, password: 'wrong' }, '127.0.8.1');
      const blockedBefore = (await attempt(service, USER, '127.0.8.1')).status;
      const tooLong = await attempt(service, { email: `${'x'.repeat(16_300)}@example.com`, password: 'x' }, '127.0.8.2');
      const heapBefore = heapMiB();
      const flood = FLOOD_WAVE * scale(600, 1000);
      const answers = new Map<number, number>();
      for (let sent = 0; sent < flood; sent += FLOOD_WAVE) {
        // Each wave comes from its own address, each attempt names an account nobody has.
        const from = `127.2.${(sent / FLOOD_WAVE) >> 8}.${(sent / FLOOD_WAVE) & 255 || 1}`;
        const wave = await Promise.all(Array.from({ length: FLOOD_WAVE }, (_, i) => attempt(service, { email: floodEmail(sent + i), password: 'x' }, from)));
        for (const { status } of wave) answers.set(status, (answers.get(status) ?? 0) + 1);
      }
      const heapGrowth = heapMiB() - heapBefore;
      const blockedAfter = await attempt(service, USER, '127.0.8.1');
      const checks = {
        'the pair was blocked before the flood': blockedBefore === 429,
        'an email over 254 characters is refused as invalid (400)': tooLong.status === 400,
        'every attempt of the flood was checked and failed (401)': answers.get(401) === flood,
        'the blocked pair is still blocked after the flood': blockedAfter.status === 429,
        [`the heap grew by less than ${TABLES_BOUND_MIB} MiB (the tables are bounded)`]: heapGrowth < TABLES_BOUND_MIB,
      };
      report({
        key: '7b',
        case: '7. A flood meant to flush the throttle table',
        done: `One client blocked for the user account after 5 wrong passwords; then ${flood} failed logins, each for a new 254-character email, ${FLOOD_WAVE} at a time from a new address per wave; and one with a 16,300-character email.`,
        expected: `The long email is invalid input (400). Every attempt of the flood is checked (401), yet the table does not forget the blocked client (it stays blocked), and the tables stay bounded: the heap, collected before and after, grows by less than ${TABLES_BOUND_MIB} MiB.`,
        observed: `Before the flood: ${blockedBefore}; after it: ${blockedAfter.status} (Retry-After ${blockedAfter.headers['retry-after']} s). 16,300-character email: ${tooLong.status}. The flood's answers: ${[...answers].map(([status, count]) => `${count} × ${status}`).join(', ')}. Heap of the test process (the service runs in it) ${heapGrowth.toFixed(1)} MiB larger after the flood.`,
        pass: passed(checks),
      });
      expectChecks(checks);
    } finally {
      await service.close();
    }
  }, 300_000);

  test('behind a reverse proxy, one attacker blocks itself, not the clients sharing the proxy', async () => {
    const { service } = await loginService({ TRUST_PROXY: '1' });
    const proxy = await startReverseProxy(service.url);
    try {
      const through = (from: string, credentials: { email: string; password: string }) =>
        send(proxy.url, { method: 'POST', path: '/api/login', json: credentials, localAddress: from, headers: { 'x-forwarded-for': '127.0.7.99' } });
      const attacks = await Promise.all(Array.from({ length: 30 }, () => through('127.0.7.1', { email: USER.email, password: 'wrong' })));
      const others = await Promise.all(['127.0.7.2', '127.0.7.3', '127.0.7.4', '127.0.7.5', '127.0.7.6'].map((from) => through(from, USER)));
      const attackerNow = await through('127.0.7.1', USER);
      const checks = {
        'the attacker got at most 5 guesses checked': attacks.filter((answer) => answer.status === 401).length <= 5,
        'the attacker is now refused, even with the right password': attackerNow.status === 429,
        'every other client behind the proxy logged in': others.every((answer) => answer.status === 200),
      };
      report({
        key: '7c',
        case: '7. One attacker behind a shared reverse proxy',
        done: 'The login service with TRUST_PROXY=1 behind a reverse proxy in its own process; one client sends 30 wrong passwords at once (claiming another address in X-Forwarded-For); 5 other clients then log in.',
        expected: 'The client address is read from the right of X-Forwarded-For: the attacker is blocked after 5 guesses, the others are not affected.',
        observed: `Attacker: ${attacks.filter((answer) => answer.status === 401).length} guesses checked, ${attacks.filter((answer) => answer.status === 429).length} refused, then ${attackerNow.status} with the right password. Others: ${others.map((answer) => answer.status).join(', ')}.`,
        pass: passed(checks),
      });
      expectChecks(checks);
    } finally {
      await proxy.stop();
      await service.close();
    }
  }, 120_000);
});
