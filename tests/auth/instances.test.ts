import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { send } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import type { AuthDeps } from '../../server/auth/index.js';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, authConfig, tokenFrom, USER, useAuthInstances } from '../support/authClient.js';

// Two login-service instances on different ports, as two processes (or two hosts) behind one
// proxy would run them: with SESSION_STORE=postgres they share one database and nothing else.

const running = useAuthInstances();

/** Two instances on one fresh database (SESSION_STORE=postgres) or each on its own memory. */
async function instances(env: Record<string, string> = {}) {
  const start = async () => {
    const config = authConfig({ SESSION_SWEEP_INTERVAL_MS: '100', ...env });
    const instance = await running.start({
      deps: { config },
      ...(config.sessions.store === 'postgres' && { db: (await running.database()).connect() }),
    });
    return client(instance);
  };
  const [a, b] = await Promise.all([start(), start()]);
  return { a, b, start };
}

function client(instance: StartedService<AuthDeps>) {
  const cookie = (token?: string) => (token ? { cookie: `token=${token}` } : {});
  return {
    instance,
    login: (credentials = USER) => instance.request('POST', '/api/login', { json: credentials }),
    signIn: async (credentials = USER) =>
      tokenFrom(await instance.request('POST', '/api/login', { json: credentials })),
    me: async (token: string) =>
      (await instance.request('GET', '/api/me', { headers: cookie(token) })).status,
    logout: (token: string) => instance.request('POST', '/api/logout', { headers: cookie(token) }),
    call: (token: string, method: string, path: string) =>
      instance.request(method, path, { headers: cookie(token) }),
    dashboard: async (token: string) =>
      (await send(instance.url, { method: 'GET', path: '/dashboard', headers: cookie(token) }))
        .status,
  };
}

describe('two instances on one database (SESSION_STORE=postgres)', () => {
  const env = { SESSION_STORE: 'postgres' };

  it(
    'a login on A is signed in on B, a logout on B ends it on A at once; an administrator ' +
      'ending a session on A signs it out on B; the sixth wrong password is refused on each; ' +
      'sessions outlive a restart of both',
    async () => {
      const { a, b, start } = await instances(env);
      const token = await a.signIn();
      expect([await b.me(token), await b.dashboard(token)]).toEqual([200, 200]);
      expect((await b.logout(token)).status).toBe(200);
      expect([await a.me(token), await a.dashboard(token)]).toEqual([401, 302]);

      const user = await b.signIn();
      const admin = await a.signIn(ADMIN);
      const listed = (await a.call(admin, 'GET', '/api/admin/sessions')).json as {
        users: { id: string; sessions: { id: string }[] }[];
      };
      const id = listed.users.find((account) => account.id === '1')!.sessions[0]!.id;
      expect((await a.call(admin, 'DELETE', `/api/admin/sessions/${id}`)).status).toBe(200);
      expect(await b.me(user)).toBe(401);

      const wrong = { email: USER.email, password: 'wrong' };
      for (const one of [a, b, a, b, a]) expect((await one.login(wrong)).status).toBe(401);
      for (const one of [a, b]) {
        const refused = await one.login(USER);
        expect([refused.status, refused.json]).toEqual([429, { error: messages.tooManyAttempts }]);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800);
      }

      const kept = await a.signIn(ADMIN);
      await running.stopAll();
      const [a2, b2] = [await start(), await start()];
      expect([await a2.me(kept), await b2.me(kept)]).toEqual([200, 200]);
    },
  );

  it('refuses an expired session on both, and deletes its row once', async () => {
    const { a, b } = await instances({ ...env, SESSION_TTL_SECONDS: '1' });
    const token = await a.signIn();
    expect(await b.me(token)).toBe(200);
    await sleep(1_100);
    expect([await a.me(token), await b.me(token)]).toEqual([401, 401]);
    const rows = (await running.database()).connect();
    const count = async () =>
      (await rows.query<{ count: number }>('SELECT count(*)::int AS count FROM sessions')).rows[0]!
        .count;
    for (let waited = 0; (await count()) > 0 && waited < 5_000; waited += 100) await sleep(100);
    expect(await count()).toBe(0);
    const swept = [a, b].flatMap(({ instance }) =>
      instance.logs.lines.filter((line) => line.msg === 'expired sessions deleted'),
    );
    expect(swept.map((line) => line.swept)).toEqual([1]);
  });
});

describe('instances with SESSION_STORE=memory', () => {
  it('each knows only its own sessions, and a restart ends them', async () => {
    const { a, b, start } = await instances();
    const token = await a.signIn();
    expect([await a.me(token), await b.me(token)]).toEqual([200, 401]);
    await running.stopAll();
    expect(await (await start()).me(token)).toBe(401);
  });
});
