import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, USER, useAuthInstances } from '../support/authClient.js';

// Two login-service instances on different ports, as two processes (or two hosts) behind one
// proxy would run them: with SESSION_STORE=postgres they share one database and nothing else.

const running = useAuthInstances();

/** Two instances on one fresh database (SESSION_STORE=postgres) or each on its own memory. */
async function instances(env: Record<string, string> = {}) {
  const start = () => running.configured({ SESSION_SWEEP_INTERVAL_MS: '100', ...env });
  const [a, b] = await Promise.all([start(), start()]);
  return { a, b, start };
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
      expect((await b.as(token, 'POST', '/api/logout')).status).toBe(200);
      expect([await a.me(token), await a.dashboard(token)]).toEqual([401, 302]);

      const user = await b.signIn();
      const admin = await a.signIn(ADMIN);
      const listed = (await a.as(admin, 'GET', '/api/admin/sessions')).json as {
        users: { id: string; sessions: { id: string }[] }[];
      };
      const id = listed.users.find((account) => account.id === '1')!.sessions[0]!.id;
      expect((await a.as(admin, 'DELETE', `/api/admin/sessions/${id}`)).status).toBe(200);
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
      (await rows.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions')).rows[0]!.n;
    await expect.poll(count, { timeout: 5_000 }).toBe(0);
    const swept = [a, b].flatMap(({ service }) =>
      service.logs.lines.filter((line) => line.msg === 'expired sessions deleted'),
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
