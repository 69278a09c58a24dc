import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { percentile, send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { ensureSpaBuilt } from '../../server/auth/spa.js';
import { ADMIN, USER } from '../support/authClient.js';
import { range } from '../support/hostileLoad.js';
import { startFlood, type FloodReport } from '../support/loginFlood.js';
import { createTestDatabase } from '../support/services.js';
import { expectChecks } from '../support/checks.js';

// One address, or a few dozen, flooding the login service with wrong logins at the default
// password cost, while a real user logs in from elsewhere: the password checks are shared
// fairly, so the user is served within a second, every time. The service runs as its own
// process (compiled, as `npm start` runs it), so that its event loop is not the clients'.

/** How long the user logs in under the flood. */
const FLOOD_MS = 2_000;
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
/** The failures an address may cause in 15 minutes (then a Retry-After of minutes, not 1 s). */
const PER_ADDRESS = 50;

type Login = { status: number | string; ms: number };

/** The user's browser: a keep-alive connection from `from`, opened by loading the login page. */
async function userBrowser(url: string, from: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  onTestFinished(() => agent.destroy());
  await send(url, { method: 'GET', path: '/login', agent, localAddress: from });
  return { url, from, agent };
}

/**
 * `USER_LOGINS` logins of the user with the right password from the browser, spread over
 * `FLOOD_MS`: each one's status and time.
 */
async function userLogins(
  { url, from, agent }: Awaited<ReturnType<typeof userBrowser>>,
  device?: string,
): Promise<Login[]> {
  const logins: Login[] = [];
  for (let login = 0; login < USER_LOGINS; login++) {
    const startedAt = performance.now();
    const reply = await send(url, {
      method: 'POST',
      path: '/api/login',
      json: USER,
      agent,
      localAddress: from,
      headers: device ? { cookie: `device=${device}` } : {},
      timeoutMs: 30_000,
    }).catch((error: Error) => ({
      status: error.message,
      ms: performance.now() - startedAt,
    }));
    logins.push({ status: reply.status, ms: reply.ms });
    await sleep(Math.max(0, FLOOD_MS / USER_LOGINS - (performance.now() - startedAt)));
  }
  return logins;
}

/**
 * A few logins, each on a new connection so that every worker gets some, then wrong logins for
 * two seconds, from an address of their own: a process that has served a while has compiled its
 * code (its first requests run in V8's interpreter, many times slower) and loaded what the first
 * login loads, and a flood met right after a start would measure that rather than the service.
 */
async function warmUp(services: RunningProcess, from: string): Promise<void> {
  const url = services.urls.auth;
  for (let login = 0; login < 4; login++)
    await send(url, {
      method: 'POST',
      path: '/api/login',
      json: ADMIN,
      localAddress: from,
    });
  const flood = startFlood({ url, addresses: [from], lanes: 20 });
  await flood.started;
  await sleep(2_000);
  await flood.stop();
}

/** What the instances logged while `during` ran: error lines, stacks, bytes. */
async function logsDuring<T>(instances: RunningProcess[], during: () => Promise<T>) {
  const lengths = () => instances.map((instance) => instance.output().length);
  // What an earlier flood still has to write is not this one's: once nothing was written for
  // half a second.
  for (let last = ''; last !== lengths().join();) {
    last = lengths().join();
    await sleep(500);
  }
  const before = lengths();
  const result = await during();
  // The last request lines are written after their answers.
  await sleep(200);
  const text = instances.map((instance, i) => instance.output().slice(before[i])).join('');
  const lines = logLines(text);
  return {
    result,
    quiet:
      lines.every((line) => line.level < 50) &&
      !lines.some((line) => JSON.stringify(line).includes('"stack"')),
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
    firstRefusal: reports.length === 1 ? reports[0]!.firstRefusal : undefined,
  };
}

/**
 * A flood from `addresses`, `lanes` wrong logins in flight from each, spread over the instances,
 * while the user logs in from a new browser on the first instance (and, with `trusted`, from a
 * browser that logged in before on the last): every login of the user answers 200 within its
 * bound, no address has more than its budget checked, and the log stays quiet and small.
 */
async function floodWhileUserLogsIn(
  instances: RunningProcess[],
  {
    addresses,
    lanes,
    user,
    trusted,
  }: { addresses: string[]; lanes: number; user: string; trusted?: string },
) {
  const urls = instances.map((instance) => instance.urls.auth);
  let device: string | undefined;
  if (trusted) {
    const reply = await send(urls[0]!, {
      method: 'POST',
      path: '/api/login',
      json: USER,
      localAddress: trusted,
    });
    device = /device=([^;]+)/.exec(String(reply.headers['set-cookie']))?.[1];
    expect(device, `a device cookie (${reply.status})`).toBeDefined();
  }
  const browser = await userBrowser(urls[0]!, user);
  const trustedBrowser = trusted && (await userBrowser(urls.at(-1)!, trusted));
  const { result, quiet, bytes } = await logsDuring(instances, async () => {
    const floods = urls.map((url) => startFlood({ url, addresses, lanes: lanes / urls.length }));
    await Promise.all(floods.map((flood) => flood.started));
    if (!trusted) await sleep(500);
    const [logins, trustedLogins] = await Promise.all([
      userLogins(browser),
      trustedBrowser ? userLogins(trustedBrowser, device) : [],
    ]);
    const attack = together(await Promise.all(floods.map((flood) => flood.stop())));
    return { attack, logins, trustedLogins };
  });
  const { attack, logins, trustedLogins } = result;
  const p95 = (all: Login[]) =>
    percentile(
      all.map((login) => login.ms),
      95,
    );
  const served = (all: Login[]) => all.every((login) => login.status === 200);
  const perRequest = bytes / (attack.sent + logins.length + trustedLogins.length);
  expectChecks({
    [`no flooding address had more than ${PER_ADDRESS} attempts checked`]: addresses.every(
      (from) => (attack.checked[from] ?? 0) <= PER_ADDRESS,
    ),
    [`all ${USER_LOGINS} logins of the user from a new browser answered 200`]: served(logins),
    [`they took p95 < ${P95_LIMIT_MS} ms`]: p95(logins) < P95_LIMIT_MS,
    ...(trusted
      ? {
          [`all ${USER_LOGINS} from a trusted browser answered 200`]: served(trustedLogins),
          [`they took p95 < ${TRUSTED_P95_LIMIT_MS} ms`]: p95(trustedLogins) < TRUSTED_P95_LIMIT_MS,
          'the flood was never answered 503': !attack.outcomes['503'],
        }
      : {
          'the flood met 429 within its first 100 attempts':
            attack.firstRefusal !== undefined && attack.firstRefusal < 100,
        }),
    'no error-level line and no stack in the log': quiet,
    [`at most ${LOG_BYTES_PER_REQUEST} bytes of log per request`]:
      perRequest <= LOG_BYTES_PER_REQUEST,
  });
}

/**
 * One address with 200 wrong logins in flight at the first instance, then 40 addresses with 2
 * each spread over the instances: each address waits behind itself, never the user, and a trusted
 * browser is served ahead of every untrusted check.
 */
async function floods(instances: RunningProcess[], subnet: number) {
  await floodWhileUserLogsIn(instances.slice(0, 1), {
    addresses: [`127.0.${subnet}.1`],
    lanes: 200,
    user: `127.0.50.${subnet}`,
  });
  await floodWhileUserLogsIn(instances, {
    addresses: range(40).map((index) => `127.0.${subnet + 1}.${index + 1}`),
    lanes: 2,
    user: `127.0.50.${subnet + 1}`,
    trusted: `127.0.51.${subnet + 1}`,
  });
}

describe('8. Login floods at the default password cost', () => {
  // Empty counts as unset: the default cost, whatever the environment of the test run says.
  const env = { SERVICES: 'auth', PASSWORD_HASH_COST: '', LOG_LEVEL: 'info', LOG_FORMAT: 'json' };
  const cleanups: (() => Promise<unknown>)[] = [];
  /** The compiled entry point, as `npm start` runs it, on a data folder of its own. */
  const start = async (variables: Record<string, string>) => {
    const dataDir = await temporaryDataDir();
    cleanups.push(() => removeDataDir(dataDir));
    const services = await startProcess({ dataDir, form: 'compiled', env: variables });
    cleanups.push(() => services.stop());
    return services;
  };
  let memory: RunningProcess;
  let pair: RunningProcess[];

  // Each instance starts or warms up while another starts; the floods then come one at a time.
  beforeAll(async () => {
    await ensureSpaBuilt();
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const shared = { ...env, SESSION_STORE: 'postgres', DATABASE_URL: database.url };
    const [started, first] = await Promise.all([start(env), start(shared)]);
    // The second of the pair once the first has migrated the schema.
    const [second] = await Promise.all([start(shared), warmUp(started, '127.0.39.1')]);
    await Promise.all([warmUp(first, '127.0.39.2'), warmUp(second, '127.0.39.3')]);
    [memory, pair] = [started, [first, second]];
  }, 240_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test('SESSION_STORE=memory: one address, then many, cannot keep the user out', async () => {
    await floods([memory], 40);
    expect(await memory.stop()).toBe(0);
  }, 180_000);

  test('SESSION_STORE=postgres, two instances: the same, the counts shared', async () => {
    await floods(pair, 42);
    expect(await Promise.all(pair.map((instance) => instance.stop()))).toEqual([0, 0]);
  }, 180_000);
});
