import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import {
  ADMIN,
  signIn,
  tokenFrom,
  USER,
  useAuthService,
  type AuthClient,
} from '../support/authClient.js';

const { start } = useAuthService();

const ADMIN_API = [
  ['GET', '/api/admin/sessions'],
  ['DELETE', `/api/admin/sessions/${crypto.randomUUID()}`],
  ['DELETE', '/api/admin/users/1/sessions'],
  ['GET', '/api/admin/settings'],
] as const;

const idsOf = async (service: AuthClient, token: string) =>
  (
    (await service.as(token, 'GET', '/api/sessions')).json as {
      sessions: { id: string; current: boolean }[];
    }
  ).sessions;

const currentId = async (service: AuthClient, token: string) =>
  (await idsOf(service, token)).find((session) => session.current)!.id;

// Every case runs on both stores: what a client sees does not depend on where sessions are kept.
describe.each(['memory', 'postgres'])('with SESSION_STORE=%s', (store) => {
  const startService = (env: Record<string, string> = {}) =>
    start({ SESSION_STORE: store, ...env });

  describe("a user's own sessions", () => {
    it(
      'lists the browsers the user is signed in with, ' +
        "marking this one, and nobody else's; never a token",
      async () => {
        const service = await startService();
        const first = await signIn(service);
        const second = tokenFrom(await service.login(USER, undefined, '127.0.0.2'));
        await signIn(service, ADMIN);
        const reply = await service.as(first, 'GET', '/api/sessions', {
          'user-agent': 'Listing/1',
        });
        expect(reply.status).toBe(200);
        const { sessions } = reply.json as { sessions: Record<string, unknown>[] };
        expect(sessions).toHaveLength(2);
        expect(sessions.map((session) => session.current)).toEqual([true, false]);
        expect(sessions[1]).toMatchObject({ address: '127.0.0.2', userAgent: expect.any(String) });
        expect(reply.text).not.toContain(first);
        expect(reply.text).not.toContain(second);
        expect(reply.headers['cache-control']).toBe('no-store');
      },
    );

    it('ends every other session, keeping this one', async () => {
      const service = await startService();
      const [mine, ...others] = [
        await signIn(service),
        await signIn(service),
        await signIn(service),
      ];
      const theirs = await signIn(service, ADMIN);
      const reply = await service.as(mine, 'DELETE', '/api/sessions');
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual({ ended: 2 });
      for (const token of others)
        expect((await service.me(token)).json).toEqual({ error: messages.invalidSession });
      expect((await service.me(mine)).status).toBe(200);
      expect((await service.me(theirs)).status).toBe(200);
    });

    it("ends one of the user's sessions by id, and never another user's (404)", async () => {
      const service = await startService();
      const [mine, other] = [await signIn(service), await signIn(service)];
      const admins = await signIn(service, ADMIN);
      const otherId = (await idsOf(service, mine)).find((session) => !session.current)!.id;
      expect(
        (await service.as(mine, 'DELETE', `/api/sessions/${await currentId(service, admins)}`))
          .json,
      ).toEqual({ error: messages.sessionNotFound });
      expect((await service.me(admins)).status).toBe(200);
      const reply = await service.as(mine, 'DELETE', `/api/sessions/${otherId}`);
      expect(reply.status).toBe(200);
      expect((await service.me(other)).status).toBe(401);
      expect((await service.as(mine, 'DELETE', `/api/sessions/${otherId}`)).status).toBe(404);
      expect((await service.as(mine, 'DELETE', '/api/sessions/not-an-id')).status).toBe(404);
    });

    it('answers 401 without a session, 403 to a page of another site, ending nothing', async () => {
      const service = await startService();
      const [mine, other] = [await signIn(service), await signIn(service)];
      for (const [method, path] of [
        ['GET', '/api/sessions'],
        ['DELETE', '/api/sessions'],
        ['DELETE', `/api/sessions/${crypto.randomUUID()}`],
      ]) {
        const reply = await service.as(undefined, method!, path!);
        expect(reply.status).toBe(401);
        expect(reply.json).toEqual({ error: messages.unauthenticated });
      }
      const forged = await service.as(mine, 'DELETE', '/api/sessions', {
        origin: 'https://evil.example',
      });
      expect(forged.status).toBe(403);
      expect(forged.json).toEqual({ error: messages.foreignRequest });
      expect((await service.me(other)).status).toBe(200);
    });
  });

  describe('administration', () => {
    it('answers 401 without a session, 403 {error} to a user, at each admin endpoint', async () => {
      const service = await startService();
      const user = await signIn(service);
      for (const [method, path] of ADMIN_API) {
        const anonymous = await service.as(undefined, method, path);
        expect([path, anonymous.status, anonymous.json]).toEqual([
          path,
          401,
          { error: messages.unauthenticated },
        ]);
        const ended = await service.as(crypto.randomUUID(), method, path);
        expect([path, ended.status, ended.json]).toEqual([
          path,
          401,
          { error: messages.invalidSession },
        ]);
        const forbidden = await service.as(user, method, path);
        expect([path, forbidden.status, forbidden.json]).toEqual([
          path,
          403,
          { error: messages.forbidden },
        ]);
      }
      expect((await service.me(user)).status).toBe(200);
    });

    it('lists every account with its live sessions, never a token', async () => {
      const service = await startService();
      const users = [await signIn(service), await signIn(service)];
      const admin = await signIn(service, ADMIN);
      const reply = await service.as(admin, 'GET', '/api/admin/sessions');
      expect(reply.status).toBe(200);
      const { users: accounts } = reply.json as {
        users: { id: string; email: string; role: string; sessions: { current: boolean }[] }[];
      };
      expect(
        accounts.map(({ id, email, role, sessions }) => [id, email, role, sessions.length]),
      ).toEqual([
        ['1', USER.email, 'user', 2],
        ['2', ADMIN.email, 'admin', 1],
      ]);
      expect(accounts[1]!.sessions[0]!.current).toBe(true);
      for (const token of [...users, admin]) expect(reply.text).not.toContain(token);
    });

    it("ends any account's session by id: that browser is signed out at once", async () => {
      const service = await startService();
      const [user, kept] = [await signIn(service), await signIn(service)];
      const admin = await signIn(service, ADMIN);
      const id = await currentId(service, user);
      const reply = await service.as(admin, 'DELETE', `/api/admin/sessions/${id}`);
      expect([reply.status, reply.json]).toEqual([200, { ended: 1 }]);
      expect((await service.me(user)).json).toEqual({ error: messages.invalidSession });
      expect((await service.dashboard(user)).headers.location).toBe('/login');
      expect((await service.me(kept)).status).toBe(200);
      const again = await service.as(admin, 'DELETE', `/api/admin/sessions/${id}`);
      expect([again.status, again.json]).toEqual([404, { error: messages.sessionNotFound }]);
    });

    it('ends every session of an account; an unknown account is 404', async () => {
      const service = await startService();
      const users = [await signIn(service), await signIn(service), await signIn(service)];
      const admin = await signIn(service, ADMIN);
      const reply = await service.as(admin, 'DELETE', '/api/admin/users/1/sessions');
      expect([reply.status, reply.json]).toEqual([200, { ended: 3 }]);
      for (const token of users) expect((await service.me(token)).status).toBe(401);
      expect((await service.me(admin)).status).toBe(200);
      const unknown = await service.as(admin, 'DELETE', '/api/admin/users/99/sessions');
      expect([unknown.status, unknown.json]).toEqual([404, { error: messages.userNotFound }]);
    });

    it('refuses an ending sent by a page of another site', async () => {
      const service = await startService();
      const user = await signIn(service);
      const admin = await signIn(service, ADMIN);
      const reply = await service.as(admin, 'DELETE', '/api/admin/users/1/sessions', {
        origin: 'http://evil.example',
      });
      expect([reply.status, reply.json]).toEqual([403, { error: messages.foreignRequest }]);
      expect((await service.me(user)).status).toBe(200);
    });

    it('reads the effective settings, and no secret', async () => {
      const service = await startService({
        SESSION_TTL_SECONDS: '1800',
        SESSION_MAX_PER_USER: '7',
        DEVICE_TRUST_DAYS: '30',
        TRUST_PROXY: 'loopback',
        AUTH_ALLOWED_HOSTS: '127.0.0.1,app.example',
      });
      const admin = await signIn(service, ADMIN);
      const reply = await service.as(admin, 'GET', '/api/admin/settings');
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual({
        sessions: { store, ttlSeconds: 1800, max: 100_000, maxPerUser: 7 },
        throttling: {
          perPair: 5,
          pairWindowSeconds: 900,
          perAccount: 100,
          accountWindowSeconds: 3600,
          perAddress: 50,
          addressWindowSeconds: 900,
          waitingPerAddress: 32,
          deviceTrustDays: 30,
        },
        trustProxy: ['loopback'],
        allowedHosts: ['127.0.0.1', 'app.example'],
        production: false,
        passwordHashCost: 1024,
        audit: {
          retentionDays: 30,
          maxEvents: 100_000,
          perClient: 5,
          windowSeconds: 60,
          maxClients: 1000,
        },
      });
      for (const secret of [USER.password, ADMIN.password, admin])
        expect(reply.text).not.toContain(secret);
    });
  });

  describe("the administrators' pages", () => {
    for (const path of ['/admin/users', '/admin/settings']) {
      it(
        `${path}: no session → /login, role user → the 403 page, ` +
          `admin → the page rendered on the server; never stored`,
        async () => {
          const service = await startService();
          const anonymous = await service.page(path);
          expect([anonymous.status, anonymous.headers.location]).toEqual([302, '/login']);
          expect(anonymous.text).not.toContain('<script');
          const user = await service.as(await signIn(service), 'GET', path);
          expect(user.status).toBe(403);
          expect(user.text).toContain('このページを表示する権限がありません');
          expect(user.text).not.toContain(ADMIN.email);
          const adminToken = await signIn(service, ADMIN);
          const admin = await service.as(adminToken, 'GET', path);
          expect(admin.status).toBe(200);
          expect(admin.headers['content-type']).toMatch(/^text\/html/);
          expect(admin.text).not.toContain(adminToken);
          for (const reply of [anonymous, user, admin])
            expect(reply.headers['cache-control']).toBe('no-store');
        },
      );
    }

    it(
      '/admin/users lists every account and its sessions ' +
        'in the HTML; /admin/settings the settings',
      async () => {
        const service = await startService();
        await service.login(USER, undefined, '127.0.0.3');
        const admin = await signIn(service, ADMIN);
        const users = await service.as(admin, 'GET', '/admin/users');
        expect(users.text).toContain('<title>ユーザ管理</title>');
        expect(users.text).toContain(`${USER.email} のセッション`);
        expect(users.text).toContain('127.0.0.3');
        const settings = await service.as(admin, 'GET', '/admin/settings');
        expect(settings.text).toContain('<title>システム設定</title>');
        expect(settings.text).toContain(
          store === 'postgres' ? 'PostgreSQL (postgres)' : 'プロセスのメモリー (memory)',
        );
        for (const secret of [USER.password, ADMIN.password])
          expect(settings.text).not.toContain(secret);
      },
    );
  });
});
