import type { AuthConfig } from '../server/shared/config.js';
import { hashLimit } from './limits.js';
import { measureHttpTogether, type HttpLoad } from './load.js';
import { rssBytes, sampleRss } from './proc.js';
import type { Measurement } from './results.js';
import { measureScenario, withComposedLimit, type Round } from './scenario.js';

/** Connections for reads of the in-memory session table. */
export const ME_CONNECTIONS = 10;
/** One login per libuv thread-pool thread (4 by default), where each password check runs. */
export const LOGIN_CONNECTIONS = 4;

/** The auth service: /api/me, /api/login, and /api/me while logins keep the hash threads busy. */
export async function authRound(round: Round, config: AuthConfig): Promise<Measurement[]> {
  const url = round.urls.auth;
  const account = config.accounts[0]!;
  const cookie = await sessionCookie(url, account);
  const me: HttpLoad = { url, path: '/api/me', headers: { cookie }, connections: ME_CONNECTIONS };
  const login: HttpLoad = {
    url,
    method: 'POST',
    path: '/api/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
    connections: LOGIN_CONNECTIONS,
  };

  const meAlone = await measureScenario(round, { service: 'auth', scenario: 'GET /api/me', load: me, koaFloor: true });

  const logins = await measureScenario(round, { service: 'auth', scenario: 'POST /api/login', load: login });
  const hashing = await hashLimit(account.password, config.passwordHashCost, LOGIN_CONNECTIONS, round.timing);

  // The reader uses one connection: its latency then shows only what the logins cost it.
  const rssBeforeBytes = await rssBytes(round.serverPid);
  const sampler = sampleRss(round.serverPid);
  const [meDuringLogins] = await measureHttpTogether([{ ...me, connections: 1 }, login], round.timing);
  const underLogins: Measurement = {
    id: 'auth GET /api/me during logins',
    service: 'auth',
    scenario: `GET /api/me during logins (${LOGIN_CONNECTIONS} login connections)`,
    connections: 1,
    load: meDuringLogins!,
    rssBeforeBytes,
    peakRssBytes: await sampler.stop(),
    warnings: [],
  };
  return [meAlone, withComposedLimit(logins, 'password hash', hashing), underLogins];
}

async function sessionCookie(url: string, account: { email: string; password: string }): Promise<string> {
  const response = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  const token = /(?:^|,\s*)token=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
  if (!response.ok || !token) throw new Error(`login for the benchmark failed: ${response.status} ${await response.text()}`);
  return `token=${token}`;
}
