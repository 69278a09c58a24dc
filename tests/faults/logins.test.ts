import { beforeAll, describe, onTestFinished, test } from 'vitest';
import { send } from '../../harness/http.js';
import { startReverseProxy } from '../../harness/reverseProxy.js';
import { startService, type StartedService } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { ADMIN, deviceFrom, USER } from '../support/authClient.js';
import { postgresUrl } from '../support/services.js';
import { heapMiB } from './heap.js';
import { expectChecks } from '../support/checks.js';
import { advanceClock, setClock } from '../support/clock.js';

// Login throttling as an attacker meets it: an account attacked from many addresses while one
// address sprays every account and unknown emails, and the owner logs in; a flood of unknown
// emails meant to make the budgets forget an account's failures or a blocked client; and one
// attacker behind the same reverse proxy as everyone else.

let spa: Spa;
beforeAll(async () => {
  await ensureSpaBuilt();
  spa = await builtSpa();
});

/** The login service on a clock the test moves; a tiny scrypt cost, so that floods are fast. */
async function loginService(env: Record<string, string> = {}) {
  setClock(Date.UTC(2030, 0, 1));
  const config = loadConfig({ PASSWORD_HASH_COST: '2', ...env });
  const service = await startService(auth, {
    deps: { config: config.auth, spa },
    edge: config.edge.auth,
    logLevel: 'warn',
    ...(config.auth.sessions.store === 'postgres' && {
      postgresUrl: postgresUrl(),
    }),
  });
  onTestFinished(() => service.close());
  return service;
}

type Credentials = { email: string; password: string };
const attempt = (
  service: StartedService<AuthDeps>,
  json: Credentials,
  localAddress: string,
  headers: Record<string, string> = {},
) =>
  send(service.url, {
    method: 'POST',
    path: '/api/login',
    json,
    localAddress,
    headers,
  });
const status = async (answer: Promise<{ status: number }>) => (await answer).status;

/** The longest valid email (254 characters), a new one for every `n`. */
const floodEmail = (n: number) => `${String(n).padStart(8, '0')}${'x'.repeat(234)}@example.com`;
/**
 * What the flood may leave in the heap, the collector's noise included: the address table's few
 * keys, and nothing per email (12,000 emails of 254 characters kept would take over 6 MiB).
 */
const FLOOD_HEAP_BOUND_MIB = 4;
/** How many failures one address may cause in 15 minutes, all accounts and emails together. */
const PER_ADDRESS = 50;

describe('login throttling under attack', () => {
  test(
    'an account attacked from many addresses while one address sprays every ' +
      'account: guesses stay bounded per hour and per address, its owner still gets in',
    async () => {
      const service = await loginService();
      const device = deviceFrom(await attempt(service, USER, '127.0.9.1'));
      const perHour: number[] = [];
      const sprayerPerQuarter: number[] = [];
      const ownerAnswers: number[] = [];
      const otherAccount: number[] = [];
      let addresses = 0;
      let sprayed = 0;
      for (let hour = 0; hour < 2; hour++) {
        let guessed = 0;
        for (let minute = 0; minute < 60; minute++) {
          // 600 guesses an hour from ever new addresses, one minute apart in tens.
          const wave = await Promise.all(
            Array.from({ length: 10 }, () =>
              status(
                attempt(
                  service,
                  { email: USER.email, password: `guess-${Math.random()}` },
                  `127.1.${(addresses >> 8) & 255}.${addresses++ & 255 || 1}`,
                ),
              ),
            ),
          );
          guessed += wave.filter((answer) => answer === 401).length;
          // And 20 a minute from one address: the user account, the admin account, unknown
          // emails in turn.
          if (minute % 15 === 0) sprayerPerQuarter.push(0);
          for (let spray = 0; spray < 20; spray++, sprayed++) {
            const email = [USER.email, ADMIN.email][sprayed % 4] ?? `spray-${sprayed}@example.com`;
            const answer = await status(
              attempt(service, { email, password: `spray-${sprayed}` }, '127.0.9.50'),
            );
            if (answer === 401) sprayerPerQuarter[sprayerPerQuarter.length - 1]!++;
            if (answer === 401 && email === USER.email) guessed++;
          }
          if (minute % 15 === 7) {
            const cookie = { cookie: `device=${device}` };
            ownerAnswers.push(await status(attempt(service, USER, '127.0.9.2', cookie)));
            otherAccount.push(await status(attempt(service, ADMIN, '127.0.9.3')));
          }
          advanceClock(60);
        }
        perHour.push(guessed);
      }
      expectChecks({
        'at most 100 guesses at the user account checked in any hour': perHour.every(
          (count) => count <= 100,
        ),
        [`at most ${PER_ADDRESS} failures of the spraying address checked in any 15 minutes`]:
          sprayerPerQuarter.every((count) => count <= PER_ADDRESS),
        'the owner, from a browser that logged in before, always got in': ownerAnswers.every(
          (answer) => answer === 200,
        ),
        'the other account was not locked out': otherAccount.every((answer) => answer === 200),
      });
    },
    300_000,
  );

  // PostgreSQL is shown the same property on a smaller flood: its checks are slower.
  test.each([
    ['memory', 60],
    ['postgres', 6],
  ] as const)(
    'SESSION_STORE=%s: a flood of unknown emails from %i addresses ' +
      "cannot flush an account's budget nor a blocked client",
    async (store, floodAddresses) => {
      const service = await loginService({ SESSION_STORE: store });
      // 95 failures on the user account, 5 from each of 19 addresses: its pair from the first is
      // blocked.
      for (let from = 1; from <= 19; from++)
        for (let guess = 0; guess < 5; guess++)
          await attempt(service, { ...USER, password: `guess-${guess}` }, `127.0.8.${from}`);
      const blockedBefore = await status(attempt(service, USER, '127.0.8.1'));
      const tooLong = {
        email: `${'x'.repeat(16_300)}@example.com`,
        password: 'x',
      };
      const tooLongAnswer = await status(attempt(service, tooLong, '127.0.8.30'));
      const heapBefore = heapMiB();
      const perAddress = 200;
      const answers = new Set<number>();
      const checkedPerAddress: number[] = [];
      let sent = 0;
      // Each address keeps two attempts in flight, its share, each for a new 254-character email.
      await Promise.all(
        Array.from({ length: floodAddresses }, async (_, index) => {
          const from = `127.2.${index >> 8}.${(index & 255) + 1}`;
          let checked = 0;
          const lane = async () => {
            while (sent < floodAddresses * perAddress) {
              const answer = await status(
                attempt(service, { email: floodEmail(sent++), password: 'x' }, from),
              );
              answers.add(answer);
              if (answer === 401) checked++;
            }
          };
          await Promise.all([lane(), lane()]);
          checkedPerAddress.push(checked);
        }),
      );
      const heapGrowth = heapMiB() - heapBefore;
      const blockedAfter = await status(attempt(service, USER, '127.0.8.1'));
      // Then guesses at the user account, each from a fresh address, until the first refusal.
      let guessesChecked = 0;
      let refusal: number | undefined;
      for (let from = 1; from <= 50 && refusal === undefined; from++) {
        const answer = await status(
          attempt(service, { ...USER, password: `late-${from}` }, `127.3.0.${from}`),
        );
        if (answer === 401) guessesChecked++;
        else refusal = answer;
      }
      expectChecks({
        'the pair was blocked before the flood': blockedBefore === 429,
        'an email over 254 characters is refused as invalid (400)': tooLongAnswer === 400,
        [`each flooding address had at most ${PER_ADDRESS} attempts checked`]:
          checkedPerAddress.every((checked) => checked <= PER_ADDRESS),
        'the rest were refused (429)': [...answers].every((answer) => [401, 429].includes(answer)),
        'the blocked pair is still blocked after the flood': blockedAfter === 429,
        'at most 5 more guesses at the account were checked before 429 (100 in the hour)':
          guessesChecked <= 5 && refusal === 429,
        ...(store === 'memory' && {
          [`the heap grew by less than ${FLOOD_HEAP_BOUND_MIB} MiB (no email is kept)`]:
            heapGrowth < FLOOD_HEAP_BOUND_MIB,
        }),
      });
    },
    300_000,
  );

  test('behind a reverse proxy, an attacker blocks itself, not clients sharing it', async () => {
    const service = await loginService({ TRUST_PROXY: '1' });
    const proxy = await startReverseProxy(service.url);
    onTestFinished(proxy.stop);
    const through = (from: string, json: Credentials) =>
      status(
        send(proxy.url, {
          method: 'POST',
          path: '/api/login',
          json,
          localAddress: from,
          headers: { 'x-forwarded-for': '127.0.7.99' },
        }),
      );
    const attacks: number[] = [];
    // Two at a time, its share of the password checks.
    for (let pair = 0; pair < 15; pair++)
      attacks.push(
        ...(await Promise.all(
          [0, 1].map(() => through('127.0.7.1', { ...USER, password: 'wrong' })),
        )),
      );
    const others = await Promise.all(
      [2, 3, 4, 5, 6].map((host) => through(`127.0.7.${host}`, USER)),
    );
    expectChecks({
      'the attacker got at most 5 guesses checked':
        attacks.filter((answer) => answer === 401).length <= 5,
      'the attacker is now refused, even with the right password':
        (await through('127.0.7.1', USER)) === 429,
      'every other client behind the proxy logged in': others.every((answer) => answer === 200),
    });
  }, 120_000);
});
