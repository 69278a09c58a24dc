import { describe, expect, it } from 'vitest';
import { startService } from '../../harness/service.js';
import { auth } from '../../server/services.js';
import { ConfigError } from '../../server/config.js';
import { ADMIN, authConfig, setCookies, signIn, tokenFrom, USER } from '../support/authClient.js';
import { useAuthService } from '../support/authClient.js';

const { start, spa } = useAuthService();

describe('auth production mode', () => {
  const production = {
    NODE_ENV: 'production',
    AUTH_USER_PASSWORD: 'a-long-secret-1',
    AUTH_ADMIN_PASSWORD: 'a-long-secret-2',
  };

  it('takes the configured passwords alone; Secure cookies, HSTS, upgraded requests', async () => {
    const service = await start(production);
    expect((await service.login(USER)).status).toBe(401);
    const admin = await service.login({ email: ADMIN.email, password: 'a-long-secret-2' });
    expect(admin.status).toBe(200);
    const reply = await service.login({ email: USER.email, password: 'a-long-secret-1' });
    expect(setCookies(reply)[0]).toMatch(
      /^token=[^;]+; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    );
    const deletion = 'token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure';
    expect(setCookies(await service.logout(tokenFrom(reply)))).toEqual([deletion]);
    const page = await service.page('/login');
    expect(page.headers).toMatchObject({
      'strict-transport-security': expect.stringMatching(/max-age=\d+/),
      'content-security-policy': expect.stringContaining('upgrade-insecure-requests'),
    });
    expect((await service.me()).headers['strict-transport-security']).toMatch(/max-age=\d+/);
  });

  it('refuses to start with a weak or default password, one line naming each variable', () => {
    const defaults = (...variables: string[]) =>
      variables.map(
        (name) => `${name} is a documented default password: production mode needs one of your own`,
      );
    const [userPassword, adminPassword] = ['AUTH_USER_PASSWORD', 'AUTH_ADMIN_PASSWORD'];
    const secret = { [userPassword]: 'a-long-secret-1', [adminPassword]: 'a-long-secret-2' };
    for (const [env, lines] of [
      [{}, defaults(userPassword, adminPassword)],
      [{ [adminPassword]: secret[adminPassword] }, defaults(userPassword)],
      [{ [userPassword]: secret[userPassword] }, defaults(adminPassword)],
      [
        { [userPassword]: 'admin-password', [adminPassword]: 'user-password' },
        defaults(userPassword, adminPassword),
      ],
      [
        { ...secret, [userPassword]: 'short-pass1' },
        [`${userPassword} is shorter than 12 characters: production mode needs a longer password`],
      ],
      [
        { ...secret, [userPassword]: 'User@Example.com' },
        [`${userPassword} is the account's own email: production mode needs another password`],
      ],
    ] as [Record<string, string>, string[]][])
      expect(() => authConfig({ NODE_ENV: 'production', ...env }), JSON.stringify(env)).toThrow(
        new ConfigError(lines.join('\n')),
      );
    // Nor in a process that does not run the login service.
    const elsewhere = { NODE_ENV: 'production', SERVICES: 'notes8080,notes8000' };
    expect(() => authConfig(elsewhere)).not.toThrow();
    expect(() => authConfig({ ...elsewhere, SERVICES: 'notes8080,auth' })).toThrow(ConfigError);
  });
});

describe('auth configuration checks', () => {
  it('refuses a hash cost not a power of two, a device trust under a day, in one line', () => {
    expect(() => authConfig({ PASSWORD_HASH_COST: '1000' })).toThrow(
      new ConfigError('PASSWORD_HASH_COST="1000" is not valid: expected a power of two'),
    );
    expect(() => authConfig({ DEVICE_TRUST_DAYS: '0' })).toThrow(
      new ConfigError('DEVICE_TRUST_DAYS="0" is not valid: expected a whole number, at least 1'),
    );
  });

  it('refuses two accounts with the same email', async () => {
    const starting = startService(auth, {
      deps: { config: authConfig({ AUTH_ADMIN_EMAIL: 'USER@example.com' }), spa: spa() },
    });
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    await expect(starting).rejects.toThrow(/share the email/);
  });

  it('logs in with accounts replaced through the environment', async () => {
    const service = await start({
      AUTH_ADMIN_EMAIL: 'boss@example.org',
      AUTH_ADMIN_PASSWORD: 'hunter2',
    });
    expect((await service.login(ADMIN)).status).toBe(401);
    const boss = await signIn(service, { email: 'boss@example.org', password: 'hunter2' });
    const reply = await service.me(boss);
    expect(reply.json).toEqual({ user: { id: '2', email: 'boss@example.org', role: 'admin' } });
  });
});
