import type { Context } from 'koa';
import * as yup from 'yup';
import { forbidden } from '../../http/errors.js';
import { route } from '../../http/route.js';
import { requestFacts } from '../auditLog.js';
import { WAITING_PER_ADDRESS } from '../login.js';
import * as cookies from '../cookies.js';
import type { AuthServices } from '../index.js';
import { failure, messages } from '../messages.js';
import { object, ok, UserView } from '../presenters.js';
import { signedInOf } from './signedIn.js';

/** Other fields are ignored; an empty string counts as missing; an email fits RFC 5321. */
const LoginInput = yup
  .object({ email: yup.string().required().max(254), password: yup.string().required() })
  .required()
  .label('LoginInput');

const Ok = object('Ok', { ok: { const: true } });
const header = (description: string, name = 'Set-Cookie', type = 'string') => ({
  [name]: { description, schema: { type } },
});

/** Logging in and out, and the current user: the JSON API of the spec, under `/api`. */
export function sessionRoutes(services: AuthServices) {
  const { sessions, checkLogin, devices, audit, cookie: options, signedInRoute } = services;
  const sessionCookie = (token: string) => cookies.header(cookies.SESSION, token, options);
  const deleted = cookies.header(cookies.SESSION, '', { ...options, maxAgeSeconds: 0 });
  const device = { ...options, maxAgeSeconds: devices.maxAgeSeconds, path: '/api/login' };
  const deviceCookie = (token: string) => cookies.header(cookies.DEVICE, token, device);
  // The sessions the browser's token cookies name, ended: their owners, for the audit trail.
  const endBrowserSessions = async (ctx: Context) => {
    const ended = await Promise.all(cookies.sessionTokens(ctx).map((t) => sessions.remove(t)));
    return ended.flatMap((session) => session?.userId ?? []);
  };
  const loggedIn = header(
    `One header per cookie: the session, \`${sessionCookie('<session token>')}\`; and, ` +
      `unless the request carried a device cookie still trusted for the account, ` +
      `a new one, \`${deviceCookie('<device token>')}\`.`,
  );
  const loggedOut = header(`\`${deleted}\`; none for a page of another site (Origin header).`);
  const throttled = failure(
    `Too many failed logins for this email or from this address, or ` +
      `${WAITING_PER_ADDRESS} logins from this address waiting (then \`Retry-After: 1\`)`,
    messages.tooManyAttempts,
  );
  const login = route(
    'POST /api/login',
    {
      summary: 'Log In',
      body: LoginInput,
      responses: {
        200: { description: 'Logged in', schema: Ok, headers: loggedIn },
        401: failure('No account has this email and password', messages.invalidCredentials),
        403: failure('Sent from a page of another site (Origin header)', messages.foreignOrigin),
        429: {
          ...throttled,
          headers: header('Seconds until another try', 'Retry-After', 'integer'),
        },
      },
    },
    async (ctx, { body }) => {
      if (cookies.isForeignOrigin(ctx)) throw forbidden(messages.foreignOrigin);
      const request = requestFacts(ctx);
      const deviceCookies = cookies.values(ctx, cookies.DEVICE);
      const attempt = { request, deviceCookies, ...(await body()) };
      const { user, generation, trustedDevice } = await checkLogin(attempt);
      // The browser's previous session, which it can no longer reach: ended, not left to expire.
      for (const userId of await endBrowserSessions(ctx))
        audit.record('session.ended', request, { userId }, { by: 'login', ended: 1 });
      const { token, capped } = await sessions.create(user, request, generation);
      audit.record('login.succeeded', request, { userId: user.id }, { trustedDevice });
      for (const { userId, cap, ended } of capped)
        audit.record('session.ended', request, { userId }, { by: 'cap', cap, ended });
      const set = [sessionCookie(token)];
      if (!trustedDevice) set.push(deviceCookie(await devices.issue(user.id, generation)));
      ctx.set('Set-Cookie', set);
      ctx.body = { ok: true };
    },
  );
  const me = signedInRoute(
    'GET /api/me',
    {
      summary: 'Current User',
      responses: ok('The signed-in user', object('Me', { user: UserView })),
    },
    (ctx) => {
      ctx.body = { user: signedInOf(ctx).user };
    },
  );
  const logout = route(
    'POST /api/logout',
    {
      summary: 'Log Out',
      responses: {
        200: { description: 'Logged out (or was not logged in)', schema: Ok, headers: loggedOut },
      },
    },
    async (ctx) => {
      // A page of another origin cannot log a visitor out: the same answer, but nothing ended.
      if (!cookies.isForeignOrigin(ctx)) {
        for (const userId of await endBrowserSessions(ctx))
          audit.record('logout', requestFacts(ctx), { userId });
        ctx.set('Set-Cookie', deleted);
      }
      ctx.body = { ok: true };
    },
  );
  return [login, me, logout];
}
