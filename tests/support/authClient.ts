import { afterEach, beforeAll, expect, vi } from 'vitest';
import { send, type Reply } from '../../harness/http.js';
import { startService, type StartedService, type StartOptions } from '../../harness/service.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { serviceDatabase, type ServiceDatabase } from './serviceDatabase.js';
import { advanceClock, setClock } from './clock.js';
import { postgresUrl } from './services.js';

/** Header fields, or variables of an environment, by name. */
type Fields = Record<string, string>;

export const USER = { email: 'user@example.com', password: 'user-password' };
export const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
export const START = Date.parse('2030-01-01T00:00:00Z');

export const authConfig = (env: Fields = {}) =>
  loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024', ...env }).auth;

/**
 * The instances of the login service a test file starts, with the pages built once for the file:
 * `start` runs one (as startService does, the pages given), `configured(env)` one configured as
 * the process would be, reached as a browser does; `database()` is the scratch database
 * the instances of a test share, as instances behind one proxy, or one restarted, do; `stop`
 * closes one before the test ends, `stopAll` every one running. After each test every instance
 * still running is closed and the database dropped. A test fails if an instance it closed logged
 * an unexpected failure.
 */
export function useAuthInstances() {
  let spa: Spa;
  let database: Promise<ServiceDatabase> | undefined;
  const running: StartedService<AuthDeps>[] = [];

  beforeAll(async () => {
    await ensureSpaBuilt();
    spa = await builtSpa();
  });
  afterEach(async () => {
    vi.useRealTimers();
    try {
      await stopAll();
    } finally {
      await (await database)?.drop();
      database = undefined;
    }
  });

  async function close(services: StartedService<AuthDeps>[]) {
    await Promise.all(services.map((service) => service.close()));
    // Every answer a test saw was meant; none was an unexpected failure of the service.
    for (const service of services) expect(service.logs.errors()).toEqual([]);
  }
  const stopAll = () => close(running.splice(0));

  async function start({
    deps,
    ...options
  }: Omit<StartOptions<AuthDeps>, 'deps'> & { deps: Omit<StartOptions<AuthDeps>['deps'], 'spa'> }) {
    const service = await startService(auth, { ...options, deps: { ...deps, spa } });
    running.push(service);
    return service;
  }
  const shared = () =>
    (database ??= serviceDatabase(auth).then(async (created) => {
      await created.migrate();
      return created;
    }));

  return {
    spa: () => spa,
    start,
    database: shared,
    /** An instance configured by `env` (on the test's database with SESSION_STORE=postgres). */
    async configured(env: Fields = {}) {
      const config = authConfig(env);
      const postgres = config.sessions.store === 'postgres';
      return browserOf(
        await start({ deps: { config }, ...(postgres && { db: (await shared()).connect() }) }),
      );
    },
    stop(service: StartedService<AuthDeps>) {
      const at = running.indexOf(service);
      return close(at < 0 ? [] : running.splice(at, 1));
    },
    stopAll,
  };
}

/** An instance as a browser reaches it: a login's answer, the statuses of a session's requests. */
function browserOf(service: StartedService<AuthDeps>) {
  const cookie = (token: string) => ({ headers: { cookie: `token=${token}` } });
  const login = (credentials = USER, from?: string, device?: string) =>
    service.request('POST', '/api/login', {
      json: credentials,
      localAddress: from,
      headers: device ? { cookie: `device=${device}` } : {},
    });
  const as = (token: string, method: string, path: string) =>
    service.request(method, path, cookie(token));
  return {
    service,
    login,
    signIn: async (credentials = USER) => tokenFrom(await login(credentials)),
    as,
    me: async (token: string) => (await as(token, 'GET', '/api/me')).status,
    dashboard: async (token: string) =>
      (await send(service.url, { method: 'GET', path: '/dashboard', ...cookie(token) })).status,
  };
}

/**
 * The login service of a test file: `start(env)` runs it over HTTP on a clock the test moves
 * (`advance(seconds)`, see setClock; PostgreSQL keeps its own time), with its
 * sessions where SESSION_STORE in `env` says (PostgreSQL: a scratch database of the suite's
 * server). Its API is reached through `request`, which checks each answer against the
 * service's OpenAPI document; its pages through `page`. Each service is closed after its test,
 * which fails if the service logged an unexpected failure.
 */
export function useAuthService() {
  const instances = useAuthInstances();

  async function start(env: Fields = {}) {
    if (!vi.isFakeTimers()) setClock(START);
    const config = authConfig(env);
    const service = await instances.start({
      deps: { config },
      edge: loadConfig({ PASSWORD_HASH_COST: '1024', ...env }).edge.auth,
      ...(config.sessions.store === 'postgres' && { postgresUrl: postgresUrl() }),
    });
    const { url, request } = service;

    const withToken = (token: string | undefined, headers: Fields = {}) =>
      token === undefined ? headers : { ...headers, cookie: `token=${token}` };

    return {
      url,
      logs: service.logs,
      db: service.db,
      request,
      advance: advanceClock,
      /** A page or one of its files, as a browser asks for it; redirects are not followed. */
      page: (path: string, headers: Fields = {}) => send(url, { method: 'GET', path, headers }),
      postLogin: (body: string, headers: Fields = {}) =>
        request('POST', '/api/login', {
          headers: { 'content-type': 'application/json', ...headers },
          body,
        }),
      login: (credentials: typeof USER, token?: string, from?: string) =>
        request('POST', '/api/login', {
          json: credentials,
          headers: withToken(token),
          localAddress: from,
        }),
      me: (token?: string) => request('GET', '/api/me', { headers: withToken(token) }),
      logout: (token?: string, headers: Fields = {}) =>
        request('POST', '/api/logout', { headers: withToken(token, headers) }),
      dashboard: (token?: string) =>
        send(url, { method: 'GET', path: '/dashboard', headers: withToken(token) }),
      /** An API call or a page with the session of `token`. */
      as: (token: string | undefined, method: string, path: string, headers: Fields = {}) =>
        path.startsWith('/api/')
          ? request(method, path, { headers: withToken(token, headers) })
          : send(url, { method, path, headers: withToken(token, headers) }),
    };
  }

  return { start, spa: instances.spa };
}

export type AuthClient = Awaited<ReturnType<ReturnType<typeof useAuthService>['start']>>;

/** The Set-Cookie lines of an answer, none when it sets no cookie. */
export const setCookies = (reply: Reply): string[] => reply.headers['set-cookie'] ?? [];

/** The value of the cookie `name` an answer sets; fails when it sets none (or an empty one). */
function cookieFrom(reply: Reply, name: string): string {
  const line = setCookies(reply).find((cookie) => cookie.startsWith(`${name}=`));
  const value = line?.slice(name.length + 1).split(';')[0];
  if (!value) throw new Error(`no ${name} cookie in ${JSON.stringify(setCookies(reply))}`);
  return value;
}
export const tokenFrom = (reply: Reply): string => cookieFrom(reply, 'token');
/** The device cookie a login set (see DeviceTrust). */
export const deviceFrom = (reply: Reply): string => cookieFrom(reply, 'device');

export async function signIn(service: AuthClient, credentials = USER): Promise<string> {
  const reply = await service.login(credentials);
  expect(reply.status).toBe(200);
  return tokenFrom(reply);
}
