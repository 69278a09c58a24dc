import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { messages } from '../../server/auth/messages.js';
import { ADMIN, signIn, tokenFrom, USER, useAuthService } from '../support/authClient.js';
import { answer, sessionId } from './attempts.js';

const { start } = useAuthService();

const error = (key: keyof typeof messages) => ({ error: messages[key] });
const [UNAUTHENTICATED, FORBIDDEN] = [
  [401, error('unauthenticated')],
  [403, error('forbidden')],
];
const FOREIGN = [403, error('foreignRequest')];

// Every case runs on both stores: what a client sees does not depend on where sessions are kept.
describe.each(['memory', 'postgres'])('with SESSION_STORE=%s', (store) => {
  it("lists a user's own sessions, never a token; ends one, then all but this one", async () => {
    const service = await start({ SESSION_STORE: store });
    const mine = await signIn(service);
    const second = tokenFrom(await service.login(USER, undefined, '127.0.0.2'));
    const theirs = await signIn(service, ADMIN);
    const reply = await service.as(mine, 'GET', '/api/sessions', { 'user-agent': 'Listing/1' });
    expect([reply.status, reply.headers['cache-control']]).toEqual([200, 'no-store']);
    // This one marked; none of another user's.
    const { sessions } = reply.json as { sessions: Record<string, unknown>[] };
    expect(sessions.map((session) => session.current)).toEqual([true, false]);
    expect(sessions[1]).toMatchObject({ address: '127.0.0.2', userAgent: expect.any(String) });
    for (const token of [mine, second]) expect(reply.text).not.toContain(token);

    // By id, never another user's (404).
    const end = (id: string) => service.as(mine, 'DELETE', `/api/sessions/${id}`);
    const theirId = await sessionId(service, theirs);
    expect(await answer(end(theirId))).toEqual([404, error('sessionNotFound')]);
    expect((await service.me(theirs)).status).toBe(200);
    const secondId = sessions[1]!.id as string;
    expect((await end(secondId)).status).toBe(200);
    expect((await service.me(second)).status).toBe(401);
    expect([(await end(secondId)).status, (await end('not-an-id')).status]).toEqual([404, 404]);

    const others = [await signIn(service), await signIn(service)];
    const endOthers = service.as(mine, 'DELETE', '/api/sessions');
    expect(await answer(endOthers)).toEqual([200, { ended: 2 }]);
    for (const token of others)
      expect((await service.me(token)).json).toEqual(error('invalidSession'));
    for (const token of [mine, theirs]) expect((await service.me(token)).status).toBe(200);
  });

  it('answers 401 without a session, 403 to another site and to a user as admin', async () => {
    const service = await start({ SESSION_STORE: store });
    const [user, other] = [await signIn(service), await signIn(service)];
    const own = `GET /api/sessions, DELETE /api/sessions, DELETE /api/sessions/${randomUUID()}`;
    for (const [method, path] of own.split(', ').map((line) => line.split(' ')))
      expect(await answer(service.as(undefined, method!, path!)), path).toEqual(UNAUTHENTICATED);
    const origin = 'https://evil.example';
    const foreign = service.as(user, 'DELETE', '/api/sessions', { origin });
    expect(await answer(foreign)).toEqual(FOREIGN);

    const admins = `GET /api/admin/sessions, DELETE /api/admin/sessions/${crypto.randomUUID()},
      DELETE /api/admin/users/1/sessions, GET /api/admin/settings`;
    for (const [method, path] of admins.split(/,\s+/).map((line) => line.split(' '))) {
      const answers = await Promise.all(
        [undefined, crypto.randomUUID(), user].map((token) =>
          answer(service.as(token, method!, path!)),
        ),
      );
      expect(answers, path).toEqual([UNAUTHENTICATED, [401, error('invalidSession')], FORBIDDEN]);
    }
    // Ending nothing.
    for (const token of [user, other]) expect((await service.me(token)).status).toBe(200);
  });

  it('lets an admin list sessions, end one or an account’s, and read the settings', async () => {
    const service = await start({
      SESSION_STORE: store,
      SESSION_TTL_SECONDS: '1800',
      SESSION_MAX_PER_USER: '7',
      DEVICE_TRUST_DAYS: '30',
      TRUST_PROXY: 'loopback',
      AUTH_ALLOWED_HOSTS: '127.0.0.1,app.example',
    });
    const users = [await signIn(service), await signIn(service), await signIn(service)];
    const admin = await signIn(service, ADMIN);
    const listed = await service.as(admin, 'GET', '/api/admin/sessions');
    expect(listed.status).toBe(200);
    const { users: accounts } = listed.json as {
      users: { id: string; email: string; role: string; sessions: { current: boolean }[] }[];
    };
    // Every account with its live sessions, never a token.
    const shown = accounts.map(({ id, email, role, sessions }) => [
      id,
      email,
      role,
      sessions.length,
    ]);
    expect(shown).toEqual([
      ['1', USER.email, 'user', 3],
      ['2', ADMIN.email, 'admin', 1],
    ]);
    expect(accounts[1]!.sessions[0]!.current).toBe(true);
    for (const token of [...users, admin]) expect(listed.text).not.toContain(token);

    // One by id, signing that browser out at once.
    const id = await sessionId(service, users[0]!);
    const endOne = () => service.as(admin, 'DELETE', `/api/admin/sessions/${id}`);
    expect(await answer(endOne())).toEqual([200, { ended: 1 }]);
    expect((await service.me(users[0])).json).toEqual(error('invalidSession'));
    expect((await service.dashboard(users[0])).headers.location).toBe('/login');
    expect((await service.me(users[1])).status).toBe(200);
    expect(await answer(endOne())).toEqual([404, error('sessionNotFound')]);

    // Every session of an account; never for a page of another site.
    const endAll = (user: string, origin?: string) =>
      service.as(admin, 'DELETE', `/api/admin/users/${user}/sessions`, origin ? { origin } : {});
    expect(await answer(endAll('1', 'http://evil.example'))).toEqual(FOREIGN);
    expect((await service.me(users[1])).status).toBe(200);
    expect(await answer(endAll('1'))).toEqual([200, { ended: 2 }]);
    for (const token of users) expect((await service.me(token)).status).toBe(401);
    expect((await service.me(admin)).status).toBe(200);
    expect(await answer(endAll('99'))).toEqual([404, error('userNotFound')]);

    // The effective settings, no secret.
    const settings = await service.as(admin, 'GET', '/api/admin/settings');
    const throttling = {
      ...{ perPair: 5, pairWindowSeconds: 900, perAccount: 100, accountWindowSeconds: 3600 },
      ...{ perAddress: 50, addressWindowSeconds: 900, waitingPerAddress: 32 },
      deviceTrustDays: 30,
    };
    const audit = { retentionDays: 30, maxEvents: 100_000, perClient: 5, windowSeconds: 60 };
    expect([settings.status, settings.json]).toEqual([
      200,
      {
        sessions: { store, ttlSeconds: 1800, max: 100_000, maxPerUser: 7 },
        throttling,
        trustProxy: ['loopback'],
        allowedHosts: ['127.0.0.1', 'app.example'],
        ...{ production: false, passwordHashCost: 1024 },
        audit: { ...audit, maxClients: 1000 },
      },
    ]);
    for (const secret of [USER.password, ADMIN.password, admin])
      expect(settings.text).not.toContain(secret);
  });

  it('admin pages: no session → /login, a user → 403, the admin → the page', async () => {
    const service = await start({ SESSION_STORE: store });
    await service.login(USER, undefined, '127.0.0.3');
    const [user, admin] = [await signIn(service), await signIn(service, ADMIN)];
    const shown = {
      '/admin/users': ['<title>ユーザ管理</title>', `${USER.email} のセッション`, '127.0.0.3'],
      '/admin/settings': [
        '<title>システム設定</title>',
        store === 'postgres' ? 'PostgreSQL (postgres)' : 'プロセスのメモリー (memory)',
      ],
    };
    // Rendered on the server; never stored.
    for (const [path, texts] of Object.entries(shown)) {
      const anonymous = await service.page(path);
      expect([path, anonymous.status, anonymous.headers.location]).toEqual([path, 302, '/login']);
      expect(anonymous.text).not.toContain('<script');
      const forbidden = await service.as(user, 'GET', path);
      expect([path, forbidden.status]).toEqual([path, 403]);
      expect(forbidden.text).toContain('このページを表示する権限がありません');
      expect(forbidden.text).not.toContain(ADMIN.email);
      const page = await service.as(admin, 'GET', path);
      const html = expect.stringMatching(/^text\/html/);
      expect([path, page.status, page.headers['content-type']]).toEqual([path, 200, html]);
      for (const text of texts) expect(page.text).toContain(text);
      for (const secret of [admin, USER.password, ADMIN.password])
        expect(page.text).not.toContain(secret);
      for (const reply of [anonymous, forbidden, page])
        expect(reply.headers['cache-control']).toBe('no-store');
    }
  });
});
