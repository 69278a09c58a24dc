import { send } from '../harness/http.js';
import type { AuthConfig } from '../server/config.js';
import type { HttpLoad } from './load.js';
import { measureScenario, type Measurement, type Round } from './scenario.js';
import { againstPeer, SIDE_BY_SIDE_CONNECTIONS, type Requests, type Side } from './sides.js';

/**
 * Logins from the benchmark's one address: the login service checks at most 2 passwords at once
 * per client address (more answer 429 at once) and 2 at a time in all, so 2 connections keep the
 * password checks as busy as they can be, and any more would measure refusals.
 */
export const LOGIN_CONNECTIONS = 2;

/** Logins with the right password of `account`, over `connections` connections. */
export function loginLoad(
  url: string,
  account: { email: string; password: string },
  connections: number,
): HttpLoad {
  return {
    url,
    method: 'POST',
    path: '/api/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
    connections,
  };
}

/**
 * What sets the session store comparison's instance apart; the main instance keeps the default,
 * `memory`.
 */
export const POSTGRES_STORE = 'SESSION_STORE=postgres';

/**
 * The auth service: /api/me (against the peer's, when `peer` is given), /api/login, and /api/me
 * while logins keep the password checks busy. `postgresStore`: the login service of an instance
 * keeping its sessions in PostgreSQL, whose /api/me is measured with the same load (and a session
 * of its own) right after the main instance's; `logins: false` leaves out the logins and what
 * follows them.
 */
export async function authRound(
  round: Round,
  config: AuthConfig,
  {
    peer,
    logins: withLogins,
    postgresStore,
  }: { peer?: Side & { cookie: string }; logins: boolean; postgresStore?: Side },
): Promise<Measurement[]> {
  const url = round.urls.auth;
  const account = config.accounts[0]!;
  // The readers are signed in as the other account: the logins of the first would push their
  // session out (SESSION_MAX_PER_USER keeps an account's newest sessions).
  const reader = config.accounts[1] ?? account;
  const credentials = { email: reader.email, password: reader.password };
  const meOn = async (at: string): Promise<Requests> => ({
    path: '/api/me',
    headers: { cookie: await sessionCookie(at, credentials) },
  });
  const me = await meOn(url);
  const what = { service: 'auth', scenario: 'GET /api/me' };
  const service = { url, pid: round.serverPid };

  const meAlone = peer
    ? await againstPeer(
        round,
        what,
        { side: service, ready: async () => me },
        { side: peer, ready: async () => ({ path: '/api/me', headers: { cookie: peer.cookie } }) },
      )
    : await measureScenario(round.serverPid, round.timing, {
        ...what,
        load: { url, ...me, connections: SIDE_BY_SIDE_CONNECTIONS },
      });
  const measured = [meAlone];
  if (postgresStore) {
    const comparison = {
      variant: POSTGRES_STORE,
      against: { id: meAlone.id, variant: 'SESSION_STORE=memory' },
    };
    const load = {
      url: postgresStore.url,
      ...(await meOn(postgresStore.url)),
      connections: SIDE_BY_SIDE_CONNECTIONS,
    };
    measured.push(
      await measureScenario(postgresStore.pid, round.timing, { ...what, load, comparison }),
    );
  }
  if (!withLogins) return measured;
  const login = loginLoad(url, account, LOGIN_CONNECTIONS);
  const logins = await measureScenario(round.serverPid, round.timing, {
    service: 'auth',
    scenario: 'POST /api/login',
    load: login,
  });

  // The reader uses one connection: its latency then shows only what the logins cost it.
  const scenario = `GET /api/me during logins (${LOGIN_CONNECTIONS} login connections)`;
  const underLogins = await measureScenario(round.serverPid, round.timing, {
    service: 'auth',
    scenario,
    load: { url, ...me, connections: 1 },
    alongside: login,
  });
  return [...measured, logins, underLogins];
}

async function sessionCookie(
  url: string,
  credentials: { email: string; password: string },
): Promise<string> {
  const reply = await send(url, { method: 'POST', path: '/api/login', json: credentials });
  const token = /(?:^|;\s*)token=([^;]+)/.exec((reply.headers['set-cookie'] ?? []).join(';'))?.[1];
  if (reply.status !== 200 || !token)
    throw new Error(`login for the benchmark failed: ${reply.status} ${reply.text}`);
  return `token=${token}`;
}
