import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { percentile, send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { type RunningProcess } from '../../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { ensureSpaBuilt } from '../../server/auth/spa.js';
import { range, scratchDatabase, startServices } from '../support/hostileLoad.js';
import { startFlood, type FloodReport } from '../support/loginFlood.js';
import { useTemporaryDataDir } from '../support/services.js';
import { expectChecks } from '../support/checks.js';

// One address, or a few dozen, flooding the login service with wrong logins at the default
// password cost, while a real user logs in from elsewhere: the password checks are shared
// fairly, so the user is served within a second, every time. The service runs as its own
// process (compiled, as `npm start` runs it), so that its event loop is not the clients'.

const USER = { email: 'user@example.com', password: 'user-password' };
/** How long the user logs in under the flood. */
const FLOOD_MS = 3_000;
/** The attackers of the second scenario, each keeping 2 wrong logins in flight. */
const MANY_ADDRESSES = 40;
const USER_LOGINS = 20;
/**
 * 20 logins make the p95 the second slowest, which one scheduling hiccup of a loaded 2-core
 * machine decides (1,014 ms seen once); what it guards against, a user starved behind the flood,
 * took 4 to 13 s.
 */
const P95_LIMIT_MS = 2_000;
/** A browser that holds a device cookie of the account is served ahead of the crowd. */
const TRUSTED_P95_LIMIT_MS = 500;
/**
 * A request line, and an event line for each of the first refusals of an address in a minute (the
 * rest are counted in a summary): a short flood keeps more of its events than a long one.
 */
const LOG_BYTES_PER_REQUEST = 600;
/**
 * The failures an address may cause in 15 minutes; past them it gets a Retry-After of minutes, not
 * 1 s.
 */
const PER_ADDRESS = 50;
/**
 * `USER_LOGINS` logins of the user with the right password, from `from`, spread over `FLOOD_MS`:
 * each one's status and time, over the connection of the user's browser (see userBrowser).
 */
async function userLogins(
  url: string,
  { from, agent, device }: { from: string; agent: http.Agent; device?: string },
): Promise<{ status: number | string; ms: number }[]> {
  const logins: { status: number | string; ms: number }[] = [];
  for (let login = 0; login < USER_LOGINS; login++) {
    const startedAt = performance.now();
    try {
      const reply = await send(url, {
        method: 'POST',
        path: '/api/login',
        json: USER,
        agent,
        localAddress: from,
        headers: device ? { cookie: `device=${device}` } : {},
        timeoutMs: 30_000,
      });
      logins.push({ status: reply.status, ms: reply.ms });
    } catch (error) {
      logins.push({ status: (error as Error).message, ms: performance.now() - startedAt });
    }
    await sleep(Math.max(0, FLOOD_MS / USER_LOGINS - (performance.now() - startedAt)));
  }
  return logins;
}

/**
 * The user's browser: a keep-alive connection from `from`, opened by loading the login page
 * before logging in.
 */
async function userBrowser(
  url: string,
  from: string,
): Promise<{ from: string; agent: http.Agent }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  onTestFinished(() => agent.destroy());
  await send(url, { method: 'GET', path: '/login', agent, localAddress: from });
  return { from, agent };
}

/** How long wrong logins warm the process up, from an address of their own. */
const WARM_UP_MS = 2_000;
const ADMIN = { email: 'admin@example.com', password: 'admin-password' };

/**
 * A few logins, each on a new connection so that every worker gets some, then wrong logins for a
 * while, from an address of their own: a process that has served a while has compiled its code
 * (its first requests run in V8's interpreter, many times slower) and loaded what the first login
 * loads, and a flood met right after a start would measure that rather than the service.
 */
async function warmUp(services: RunningProcess, from: string): Promise<void> {
  for (let login = 0; login < 4; login++)
    await send(services.urls.auth, {
      method: 'POST',
      path: '/api/login',
      json: ADMIN,
      localAddress: from,
    });
  const flood = startFlood({ url: services.urls.auth, addresses: [from], lanes: 20 });
  await flood.started;
  await sleep(WARM_UP_MS);
  await flood.stop();
}

/** Resolves once the instances have written nothing for half a second. */
async function settled(instances: RunningProcess[]): Promise<void> {
  const lengths = () => instances.map((instance) => instance.output().length).join();
  for (let last = ''; last !== lengths();) {
    last = lengths();
    await sleep(500);
  }
}

/** What the process logged while `during` ran: error lines, stacks, bytes per request. */
async function logsDuring<T>(
  instances: RunningProcess[],
  during: () => Promise<T>,
): Promise<{ result: T; errorLines: number; stacks: number; bytes: number }> {
  // What an earlier flood still has to write is not this one's.
  await settled(instances);
  const before = instances.map((instance) => instance.output().length);
  const result = await during();
  // The last request lines are written after their answers.
  await sleep(200);
  const text = instances.map((instance, i) => instance.output().slice(before[i])).join('');
  const lines = logLines(text);
  return {
    result,
    errorLines: lines.filter((line) => line.level >= 50).length,
    stacks: lines.filter((line) => JSON.stringify(line).includes('"stack"')).length,
    bytes: Buffer.byteLength(text),
  };
}

/** The reports of floods sent to several instances at once, as one. */
function together(reports: FloodReport[]): FloodReport {
  const sum = (records: Record<string, number>[]) =>
    records.reduce<Record<string, number>>((all, record) => {
      for (const [key, count] of Object.entries(record)) all[key] = (all[key] ?? 0) + count;
      return all;
    }, {});
  return {
    sent: reports.reduce((all, report) => all + report.sent, 0),
    outcomes: sum(reports.map((report) => report.outcomes)),
    checked: sum(reports.map((report) => report.checked)),
  };
}

/**
 * One address with 200 wrong logins in flight, the user logging in from another: every login
 * of the user answers 200 within the bound, and the flood meets 429 at once.
 */
async function oneAddress(
  services: RunningProcess,
  { from, user }: { from: string; user: string },
) {
  const url = services.urls.auth;
  const browser = await userBrowser(url, user);
  const { result, errorLines, stacks, bytes } = await logsDuring([services], async () => {
    const flood = startFlood({ url, addresses: [from], lanes: 200 });
    await flood.started;
    await sleep(500);
    const logins = await userLogins(url, browser);
    return { attack: await flood.stop(), logins };
  });
  const { attack, logins } = result;
  const times = logins.map((login) => login.ms);
  const perRequest = bytes / (attack.sent + logins.length);
  const checks = {
    [`all ${USER_LOGINS} logins of the user answered 200`]: logins.every(
      (login) => login.status === 200,
    ),
    [`the user's logins took p95 < ${P95_LIMIT_MS} ms`]: percentile(times, 95) < P95_LIMIT_MS,
    'the flood met 429 within its first 100 attempts':
      attack.firstRefusal !== undefined && attack.firstRefusal < 100,
    [`the flooding address had at most ${PER_ADDRESS} attempts checked`]:
      (attack.checked[from] ?? 0) <= PER_ADDRESS,
    'no error-level line and no stack in the log': errorLines === 0 && stacks === 0,
    [`at most ${LOG_BYTES_PER_REQUEST} bytes of log per request`]:
      perRequest <= LOG_BYTES_PER_REQUEST,
  };
  expectChecks(checks);
}

/** The device cookie a login of the user from `from` is given. */
async function deviceOf(url: string, from: string): Promise<string> {
  const reply = await send(url, {
    method: 'POST',
    path: '/api/login',
    json: USER,
    localAddress: from,
  });
  const device = /device=([^;]+)/.exec(String(reply.headers['set-cookie']))?.[1];
  if (!device) throw new Error(`no device cookie (${reply.status})`);
  return device;
}

/**
 * Many addresses with 2 wrong logins in flight each, while the user logs in from a new browser
 * and from one that logged in before: each address waits behind itself, never the user, and a
 * trusted browser is served ahead of every untrusted check.
 */
async function manyAddresses(
  instances: RunningProcess[],
  { subnet, user, trusted }: { subnet: string; user: string; trusted: string },
) {
  // With two instances, each address has one login in flight on each; the new browser logs in on
  // the first, the trusted one on the last.
  const urls = instances.map((instance) => instance.urls.auth);
  const addresses = range(MANY_ADDRESSES).map((index) => `${subnet}.${index + 1}`);
  const device = await deviceOf(urls[0]!, trusted);
  const { result, errorLines, stacks, bytes } = await logsDuring(instances, async () => {
    const floods = urls.map((url) => startFlood({ url, addresses, lanes: 2 / urls.length }));
    await Promise.all(floods.map((flood) => flood.started));
    const [logins, trustedLogins] = await Promise.all([
      userLogins(urls[0]!, await userBrowser(urls[0]!, user)),
      userLogins(urls.at(-1)!, { ...(await userBrowser(urls.at(-1)!, trusted)), device }),
    ]);
    const attack = together(await Promise.all(floods.map((flood) => flood.stop())));
    return { attack, logins, trustedLogins };
  });
  const { attack, logins, trustedLogins } = result;
  const [times, trustedTimes] = [logins, trustedLogins].map((all) => all.map((one) => one.ms));
  const perRequest = bytes / (attack.sent + logins.length + trustedLogins.length);
  const checkedAtMost = Math.max(...addresses.map((from) => attack.checked[from] ?? 0));
  const checks = {
    [`no address had more than ${PER_ADDRESS} attempts checked`]: checkedAtMost <= PER_ADDRESS,
    [`all ${USER_LOGINS} logins of the user from a new browser answered 200`]: logins.every(
      (login) => login.status === 200,
    ),
    [`they took p95 < ${P95_LIMIT_MS} ms`]: percentile(times, 95) < P95_LIMIT_MS,
    [`all ${USER_LOGINS} from a trusted browser answered 200`]: trustedLogins.every(
      (login) => login.status === 200,
    ),
    [`they took p95 < ${TRUSTED_P95_LIMIT_MS} ms`]:
      percentile(trustedTimes, 95) < TRUSTED_P95_LIMIT_MS,
    'the flood was never answered 503': !attack.outcomes['503'],
    'no error-level line and no stack in the log': errorLines === 0 && stacks === 0,
    [`at most ${LOG_BYTES_PER_REQUEST} bytes of log per request`]:
      perRequest <= LOG_BYTES_PER_REQUEST,
  };
  expectChecks(checks);
}

describe('8. Login floods at the default password cost', () => {
  const dataDir = useTemporaryDataDir();
  beforeAll(() => ensureSpaBuilt());
  // Empty counts as unset: the default cost, whatever the environment of the test run says.
  const env = { SERVICES: 'auth', PASSWORD_HASH_COST: '', LOG_LEVEL: 'info', LOG_FORMAT: 'json' };

  test('SESSION_STORE=memory: one address, then many, cannot keep the user out', async () => {
    const services = await startServices(dataDir(), env);
    await warmUp(services, '127.0.39.1');
    await oneAddress(services, { from: '127.0.40.1', user: '127.0.50.1' });
    await manyAddresses([services], {
      subnet: '127.0.41',
      user: '127.0.50.2',
      trusted: '127.0.51.2',
    });
    expect(await services.stop()).toBe(0);
  }, 180_000);

  test('SESSION_STORE=postgres, two instances: the same, the counts shared', async () => {
    const url = await scratchDatabase();
    const shared = { ...env, SESSION_STORE: 'postgres', DATABASE_URL: url };
    const first = await startServices(dataDir(), shared);
    const folder = await temporaryDataDir();
    onTestFinished(() => removeDataDir(folder));
    const second = await startServices(folder, shared);
    await Promise.all([warmUp(first, '127.0.39.2'), warmUp(second, '127.0.39.3')]);
    await oneAddress(first, { from: '127.0.42.1', user: '127.0.50.3' });
    await manyAddresses([first, second], {
      subnet: '127.0.43',
      user: '127.0.50.4',
      trusted: '127.0.51.4',
    });
    expect(await first.stop()).toBe(0);
    expect(await second.stop()).toBe(0);
  }, 180_000);
});
