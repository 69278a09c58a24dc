import type { Context } from 'koa';
import * as yup from 'yup';
import { tooManyRequests, unauthorized } from '../shared/errors.js';
import { messageSchema } from '../shared/openapi.js';
import { route, type JsonSchema } from '../shared/route.js';
import type { Accounts } from './accounts.js';
import { messages } from './messages.js';
import { refuseForeignOrigin } from './security.js';
import {
  deleteSessionCookie,
  requireUser,
  sessionTokens,
  setSessionCookie,
  signedInUser,
  type CookieOptions,
  type SessionStore,
} from './sessions.js';
import type { Spa } from './spa.js';
import type { LoginThrottle } from './throttle.js';

export interface AuthRoutesDeps {
  accounts: Accounts;
  sessions: SessionStore;
  throttle: LoginThrottle;
  cookie: CookieOptions;
  spa: Spa;
}

/** Every failure's body: `{error: "…"}`. */
export const ErrorBody = messageSchema('Error', 'error');

/** Any other fields are ignored; an empty string counts as missing. */
const LoginInput = yup
  .object({
    email: yup.string().required(),
    password: yup.string().required(),
  })
  .required()
  .label('LoginInput');

const Ok: JsonSchema = { type: 'object', title: 'Ok', properties: { ok: { const: true } }, required: ['ok'] };

const User: JsonSchema = {
  type: 'object',
  title: 'User',
  properties: {
    id: { type: 'string' },
    email: { type: 'string', examples: ['user@example.com'] },
    role: { enum: ['user', 'admin'] },
  },
  required: ['id', 'email', 'role'],
};

const failure = (description: string, example: string) => ({ description, schema: ErrorBody, example: { error: example } });

const sessionCookieHeader = {
  'Set-Cookie': {
    description: '`token=<session token>; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax` (and `Secure` in production mode)',
    schema: { type: 'string' },
  },
};

/** The JSON API under `/api`, and the two pages: `/dashboard` passes the session check before any of it is sent. */
export function authRoutes({ accounts, sessions, throttle, cookie, spa }: AuthRoutesDeps) {
  const page = async (ctx: Context) => {
    // The answer depends on the session: never stored, so Back after logout asks again.
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = await spa.page(ctx.url);
  };

  return [
    route({
      method: 'post',
      path: '/api/login',
      summary: 'Log In',
      description: 'Checks the email and password and starts a session, whose token is set as the `token` cookie.',
      body: LoginInput,
      responses: {
        200: { description: 'Logged in', schema: Ok, headers: sessionCookieHeader },
        401: failure('No account has this email and password', messages.invalidCredentials),
        403: failure('Sent from a page of another site (Origin header)', messages.foreignOrigin),
        429: {
          ...failure('Too many failed logins for this email or from this address', messages.tooManyAttempts),
          headers: { 'Retry-After': { description: 'Seconds until another attempt is admitted', schema: { type: 'integer' } } },
        },
      },
      async handler(ctx, { body }) {
        refuseForeignOrigin(ctx);
        const { email, password } = await body();
        const retryAfter = throttle.admit(email, ctx.ip);
        if (retryAfter !== undefined) throw tooManyRequests(messages.tooManyAttempts, retryAfter);
        const user = await accounts.authenticate(email, password);
        if (!user) throw unauthorized(messages.invalidCredentials);
        throttle.succeeded(email, ctx.ip);
        // Decision: a login from a browser that still holds a session replaces it; the old token
        // could no longer be reached by that browser, so it is ended rather than left to expire.
        for (const previous of sessionTokens(ctx)) sessions.remove(previous);
        setSessionCookie(ctx, sessions.create(user), cookie);
        ctx.body = { ok: true };
      },
    }),

    route({
      method: 'get',
      path: '/api/me',
      summary: 'Current User',
      session: true,
      responses: {
        200: { description: 'The signed-in user', schema: { type: 'object', title: 'Me', properties: { user: User }, required: ['user'] } },
        401: failure('No `token` cookie (`unauthenticated`), or one that names no live session (`invalid session`)', messages.unauthenticated),
      },
      handler(ctx) {
        ctx.body = { user: requireUser(ctx, sessions) };
      },
    }),

    route({
      method: 'post',
      path: '/api/logout',
      summary: 'Log Out',
      description: 'Ends the session of the `token` cookie, if any, and deletes the cookie. Always 200.',
      responses: {
        200: { description: 'Logged out (or was not logged in)', schema: Ok, headers: sessionCookieHeader },
      },
      handler(ctx) {
        for (const token of sessionTokens(ctx)) sessions.remove(token);
        deleteSessionCookie(ctx, cookie);
        ctx.body = { ok: true };
      },
    }),

    route({
      method: 'get',
      path: '/',
      summary: 'Home',
      internal: true,
      responses: {},
      handler(ctx) {
        ctx.redirect('/dashboard');
      },
    }),

    route({
      method: 'get',
      path: '/login',
      summary: 'Login page',
      internal: true,
      responses: {},
      handler: page,
    }),

    route({
      method: 'get',
      path: '/dashboard',
      summary: 'Dashboard page',
      internal: true,
      responses: {},
      async handler(ctx) {
        if (!signedInUser(ctx, sessions)) {
          ctx.set('Cache-Control', 'no-store');
          return ctx.redirect('/login');
        }
        await page(ctx);
      },
    }),
  ];
}
