import { send } from '../harness/http.js';
import { hashPassword, matchesHash } from '../server/auth/accounts.js';
import type { AuthConfig } from '../server/shared/config.js';
import { measureWork, type HttpLoad } from './load.js';
import { measureScenario, withOtherPart, type Measurement, type Round } from './scenario.js';

/** Connections for reads of the session table. */
export const ME_CONNECTIONS = 10;
/** One login per libuv thread-pool thread (4 by default), where each password check runs. */
export const LOGIN_CONNECTIONS = 4;
/** A flood: four times as many logins as there are threads to check them, beside other work. */
export const LOGIN_FLOOD_CONNECTIONS = 16;

/** Logins with the right password of `account`, over `connections` connections. */
export function loginLoad(url: string, account: { email: string; password: string }, connections: number): HttpLoad {
  return {
    url,
    method: 'POST',
    path: '/api/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
    connections,
  };
}

/** What sets the session store comparison's instance apart; the main instance keeps the default, `memory`. */
export const POSTGRES_STORE = 'SESSION_STORE=postgres';

/**
 * The auth service: /api/me, /api/login, and /api/me while logins keep the hash threads busy.
 * `postgresStore`: the round on an instance keeping its sessions in PostgreSQL, whose /api/me is
 * measured with the same load (and a session of its own) right after the main instance's;
 * `logins: false` leaves out the logins and what follows them.
 */
export async function authRound(round: Round, config: AuthConfig, { logins: withLogins = true, postgresStore }: { logins?: boolean; postgresStore?: Round } = {}): Promise<Measurement[]> {
  const url = round.urls.auth;
  const account = config.accounts[0]!;
  // The readers are signed in as the other account: the logins of the first would push their
  // session out (SESSION_MAX_PER_USER keeps an account's newest sessions).
  const reader = config.accounts[1] ?? account;
  const credentials = { email: reader.email, password: reader.password };
  const meOn = async (at: string): Promise<HttpLoad> => ({ url: at, path: '/api/me', headers: { cookie: await sessionCookie(at, credentials) }, connections: ME_CONNECTIONS });
  const me = await meOn(url);
  const store = postgresStore && { round: postgresStore, me: await meOn(postgresStore.urls.auth) };
  const login = loginLoad(url, account, LOGIN_CONNECTIONS);

  const meAlone = await measureScenario(round, { service: 'auth', scenario: 'GET /api/me', load: me, limit: 'koa' });
  const measured = [meAlone];
  if (store) {
    const comparison = { variant: POSTGRES_STORE, against: { id: meAlone.id, variant: 'SESSION_STORE=memory' } };
    measured.push(await measureScenario(store.round, { service: 'auth', scenario: 'GET /api/me', load: store.me, limit: 'none', comparison }));
  }
  if (!withLogins) return measured;
  const logins = await measureScenario(round, { service: 'auth', scenario: 'POST /api/login', load: login });
  // The second part of the login's limit: its password check, with the service's own code and cost.
  const stored = hashPassword(account.password, config.passwordHashCost);
  const check = async () => {
    if (!(await matchesHash(account.password, stored))) throw new Error('password check failed');
  };
  const hashing = await measureWork(check, LOGIN_CONNECTIONS, round.timing);

  // The reader uses one connection: its latency then shows only what the logins cost it.
  const scenario = `GET /api/me during logins (${LOGIN_CONNECTIONS} login connections)`;
  const underLogins = await measureScenario(round, { service: 'auth', scenario, load: { ...me, connections: 1 }, limit: 'none', alongside: login });
  return [...measured, withOtherPart(logins, 'password hash', hashing), underLogins];
}

async function sessionCookie(url: string, credentials: { email: string; password: string }): Promise<string> {
  const reply = await send(url, { method: 'POST', path: '/api/login', json: credentials });
  const token = /(?:^|;\s*)token=([^;]+)/.exec((reply.headers['set-cookie'] ?? []).join(';'))?.[1];
  if (reply.status !== 200 || !token) throw new Error(`login for the benchmark failed: ${reply.status} ${reply.text}`);
  return `token=${token}`;
}
