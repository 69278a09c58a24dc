import * as yup from 'yup';
import { forbidden } from '../../http/errors.js';
import { route } from '../../http/route.js';
import { requestFacts } from '../auditLog.js';
import { WAITING_PER_ADDRESS } from '../checkQueue.js';
import { cookie, cookieValues } from '../cookies.js';
import type { AuthServices } from '../index.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { object, UserView } from '../presenters.js';
import { deletedSessionCookie, sessionCookie, sessionTokens } from '../sessions.js';
import { signedInRoutes } from './signedIn.js';

/** The device cookie (see DeviceTrust): sent only to the login endpoint. */
const DEVICE = 'device';

/** Other fields are ignored; an empty string counts as missing; an email fits RFC 5321. */
const LoginInput = yup
  .object({ email: yup.string().required().max(254), password: yup.string().required() })
  .required()
  .label('LoginInput');

const Ok = object('Ok', { ok: { const: true } });
const OK = { ok: true };

const setCookie = (description: string) => ({
  'Set-Cookie': { description, schema: { type: 'string' } },
});

/** Logging in and out, and the current user: the JSON API of the spec, under `/api`. */
export function sessionRoutes(services: AuthServices) {
  const { sessions, checkLogin, devices, audit, cookie: cookieOptions } = services;
  const deviceCookie = (value: string) =>
    cookie(DEVICE, value, {
      ...cookieOptions,
      maxAgeSeconds: devices.maxAgeSeconds,
      path: '/api/login',
    });
  return [
    route(
      'POST /api/login',
      {
        summary: 'Log In',
        body: LoginInput,
        responses: {
          200: {
            description: 'Logged in',
            schema: Ok,
            headers: setCookie(
              `One header per cookie: the session, ` +
                `\`${sessionCookie('<session token>', cookieOptions)}\`; ` +
                `and, unless the request carried a device cookie still trusted for the account, ` +
                `a new one, \`${deviceCookie('<device token>')}\`.`,
            ),
          },
          401: failure('No account has this email and password', messages.invalidCredentials),
          403: failure('Sent from a page of another site (Origin header)', messages.foreignOrigin),
          429: {
            ...failure(
              `Too many failed logins for this email or from this address, ` +
                `or ${WAITING_PER_ADDRESS} logins from this address waiting already ` +
                `(then \`Retry-After: 1\`)`,
              messages.tooManyAttempts,
            ),
            headers: {
              'Retry-After': {
                description: 'Seconds until another attempt is admitted',
                schema: { type: 'integer' },
              },
            },
          },
        },
      },
      async (ctx, { body }) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignOrigin);
        const request = requestFacts(ctx);
        const { user, generation, trustedDevice } = await checkLogin({
          request,
          deviceCookies: cookieValues(ctx, DEVICE),
          ...(await body()),
        });
        // The browser's previous session, which it can no longer reach: ended, not left to expire.
        for (const previous of sessionTokens(ctx)) {
          const ended = await sessions.remove(previous);
          if (ended)
            audit.record(
              'session.ended',
              request,
              { userId: ended.userId },
              { by: 'login', ended: 1 },
            );
        }
        const { address, userAgent } = request;
        const { token, capped } = await sessions.create(user, { address, userAgent }, generation);
        audit.record('login.succeeded', request, { userId: user.id }, { trustedDevice });
        for (const { userId, cap, ended } of capped)
          audit.record('session.ended', request, { userId }, { by: 'cap', cap, ended });
        const cookies = [sessionCookie(token, cookieOptions)];
        if (!trustedDevice) cookies.push(deviceCookie(await devices.issue(user.id, generation)));
        ctx.set('Set-Cookie', cookies);
        ctx.body = OK;
      },
    ),

    signedInRoutes(services.signedIn)(
      'GET /api/me',
      {
        summary: 'Current User',
        responses: {
          200: { description: 'The signed-in user', schema: object('Me', { user: UserView }) },
        },
      },
      async (_ctx, { user: { id, email, role } }) => ({ user: { id, email, role } }),
    ),

    route(
      'POST /api/logout',
      {
        summary: 'Log Out',
        responses: {
          200: {
            description: 'Logged out (or was not logged in)',
            schema: Ok,
            headers: setCookie(
              `\`${deletedSessionCookie(cookieOptions)}\`; ` +
                `none when the request comes from a page of another site (Origin header).`,
            ),
          },
        },
      },
      async (ctx) => {
        // A page of another origin cannot log a visitor out: the same answer, but nothing ended.
        if (!isForeignOrigin(ctx)) {
          for (const token of sessionTokens(ctx)) {
            const ended = await sessions.remove(token);
            if (ended) audit.record('logout', requestFacts(ctx), { userId: ended.userId });
          }
          ctx.set('Set-Cookie', deletedSessionCookie(cookieOptions));
        }
        ctx.body = OK;
      },
    ),
  ];
}
