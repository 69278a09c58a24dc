import * as yup from 'yup';
import { forbidden } from '../../http/errors.js';
import { route, type JsonSchema } from '../../http/route.js';
import { requestFacts, type AuditTrail } from '../auditLog.js';
import { failure, messages } from '../messages.js';
import { cookie, cookieValues, type CookieOptions } from '../cookies.js';
import type { DeviceTrust } from '../deviceTrust.js';
import type { LoginCheck } from '../login.js';
import { WAITING_PER_ADDRESS } from '../checkQueue.js';
import {
  deletedSessionCookie,
  requireSignedIn,
  sessionCookie,
  sessionTokens,
  type SessionStore,
  type SignedInCheck,
} from '../sessions.js';
import { isForeignOrigin } from '../origin.js';
import { signedOut } from './outcomes.js';

export interface SessionRoutesDeps {
  sessions: SessionStore;
  signedIn: SignedInCheck;
  checkLogin: LoginCheck;
  devices: DeviceTrust;
  audit: AuditTrail;
  cookie: CookieOptions;
}

/**
 * The device cookie (see DeviceTrust): sent only to the login endpoint, kept as long as it is
 * trusted.
 */
const DEVICE = 'device';

/**
 * Any other fields are ignored; an empty string counts as missing; an email is at most 254
 * characters (RFC 5321).
 */
const LoginInput = yup
  .object({
    email: yup.string().required().max(254),
    password: yup.string().required(),
  })
  .required()
  .label('LoginInput');

const Ok: JsonSchema = {
  type: 'object',
  title: 'Ok',
  properties: { ok: { const: true } },
  required: ['ok'],
};
const OK = { ok: true };

const Me: JsonSchema = {
  type: 'object',
  title: 'Me',
  properties: {
    user: {
      type: 'object',
      title: 'User',
      properties: {
        id: { type: 'string' },
        email: { type: 'string', examples: ['user@example.com'] },
        role: { enum: ['user', 'admin'] },
      },
      required: ['id', 'email', 'role'],
    },
  },
  required: ['user'],
};

/** Logging in and out, and the current user: the JSON API of the spec, under `/api`. */
export function sessionRoutes({
  sessions,
  signedIn,
  checkLogin,
  devices,
  audit,
  cookie: cookieOptions,
}: SessionRoutesDeps) {
  // The cookies as they are sent, written by the code that writes them.
  const deviceCookie = (value: string) =>
    cookie(DEVICE, value, {
      ...cookieOptions,
      maxAgeSeconds: devices.maxAgeSeconds,
      path: '/api/login',
    });
  const setCookie = (description: string) => ({
    'Set-Cookie': { description, schema: { type: 'string' } },
  });
  return [
    route(
      'POST /api/login',
      {
        summary: 'Log In',
        description:
          'Checks the email and password and starts a session, whose token is set as the `token` cookie.',
        body: LoginInput,
        responses: {
          200: {
            description: 'Logged in',
            schema: Ok,
            headers: setCookie(
              `One header per cookie: the session, \`${sessionCookie('<session token>', cookieOptions)}\`; and, unless the request carried a device cookie this service still trusts for the account, a new one, \`${deviceCookie('<device token>')}\`.`,
            ),
          },
          401: failure('No account has this email and password', messages.invalidCredentials),
          403: failure('Sent from a page of another site (Origin header)', messages.foreignOrigin),
          429: {
            ...failure(
              `Too many failed logins for this email or from this address, or ${WAITING_PER_ADDRESS} logins from this address waiting already (then \`Retry-After: 1\`)`,
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
        // Decision: a login from a browser that still holds a session replaces it; the old token
        // could no longer be reached by that browser, so it is ended rather than left to expire.
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
        const { token, capped } = await sessions.create(
          user,
          { address: request.address, userAgent: request.userAgent },
          generation,
        );
        audit.record('login.succeeded', request, { userId: user.id }, { trustedDevice });
        for (const { userId, cap, ended } of capped)
          audit.record('session.ended', request, { userId }, { by: 'cap', cap, ended });
        const cookies = [sessionCookie(token, cookieOptions)];
        if (!trustedDevice) cookies.push(deviceCookie(await devices.issue(user.id, generation)));
        ctx.set('Set-Cookie', cookies);
        ctx.body = OK;
      },
    ),

    route(
      'GET /api/me',
      {
        summary: 'Current User',
        session: true,
        responses: {
          200: { description: 'The signed-in user', schema: Me },
          ...signedOut,
        },
      },
      async (ctx) => {
        const { id, email, role } = (await requireSignedIn(ctx, signedIn)).user;
        ctx.body = { user: { id, email, role } };
      },
    ),

    route(
      'POST /api/logout',
      {
        summary: 'Log Out',
        description:
          'Ends the session of the `token` cookie, if any, and deletes the cookie. Always 200.',
        responses: {
          200: {
            description: 'Logged out (or was not logged in)',
            schema: Ok,
            headers: setCookie(
              `\`${deletedSessionCookie(cookieOptions)}\`, which deletes the session cookie; none when the request comes from a page of another site (Origin header).`,
            ),
          },
        },
      },
      async (ctx) => {
        // A page of another origin (another port included) cannot log a visitor out: the answer
        // is the same, but nothing is ended and no cookie deleted.
        if (isForeignOrigin(ctx)) {
          ctx.body = OK;
          return;
        }
        for (const token of sessionTokens(ctx)) {
          const ended = await sessions.remove(token);
          if (ended) audit.record('logout', requestFacts(ctx), { userId: ended.userId });
        }
        ctx.set('Set-Cookie', deletedSessionCookie(cookieOptions));
        ctx.body = OK;
      },
    ),
  ];
}
