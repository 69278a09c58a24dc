import type { ErrorAnswer } from '../http/app.js';
import { UNREADABLE_BODY } from '../http/body.js';
import { httpError, HttpError, MalformedJsonError } from '../http/errors.js';
import { messageOutcomes, type Contract } from '../http/openapi.js';
import { InvalidRequestError } from '../http/route.js';

// What the login form may show a person is in Japanese, like the page; the spec's machine-like
// answers stay English.
export const messages = {
  invalidCredentials: 'メールアドレスまたはパスワードが正しくありません',
  unauthenticated: 'unauthenticated',
  invalidSession: 'invalid session',
  invalidLoginBody:
    'リクエスト本文は、文字列の email と password を持つ JSON オブジェクトにしてください',
  bodyTooLarge: 'リクエスト本文が大きすぎます',
  foreignOrigin: '他のサイトからのログイン要求は受け付けません',
  foreignRequest: '他のサイトからの要求は受け付けません',
  tooManyAttempts: 'ログインの試行回数が多すぎます。しばらくしてから再度お試しください',
  forbidden: 'forbidden',
  sessionNotFound: 'session not found',
  userNotFound: 'user not found',
  notFound: 'not found',
  methodNotAllowed: 'method not allowed',
  internalError: 'internal server error',
} as const;

export const { schema: ErrorBody, outcome: failure } = messageOutcomes('Error', 'error');

/** The service's own words for the shared failures; others keep the message thrown. */
const WORDING: Record<string, string> = {
  [UNREADABLE_BODY]: messages.invalidLoginBody,
  [httpError(404).message]: messages.notFound,
  [httpError(405).message]: messages.methodNotAllowed,
  'Request body too large': messages.bodyTooLarge,
};

/** Every failure as `{error}`. */
export function shape(error: unknown): ErrorAnswer {
  if (error instanceof InvalidRequestError && error.query)
    return { status: 400, body: { error: error.query.errors.join('; ') } };
  if (error instanceof InvalidRequestError || error instanceof MalformedJsonError)
    return { status: 400, body: { error: messages.invalidLoginBody } };
  // Ours, and koa-send's own (a malformed path, for instance).
  if (error instanceof HttpError && error.expose) {
    const { status, message, headers } = error;
    return { status, body: { error: WORDING[message] ?? message }, headers };
  }
  return { status: 500, body: { error: messages.internalError } };
}

export const contract: Contract = {
  title: 'Session Login API',
  version: '1.0.0',
  description:
    'Log in with an email and password, read the current user, log out. The session token ' +
    'travels in the HttpOnly `token` cookie. Every failure answers `{error: string}`.',
  errorSchema: ErrorBody,
  invalidBody: {
    400: failure('Not a JSON object with string `email` and `password`', messages.invalidLoginBody),
  },
  invalidParams: {},
  invalidQuery: {
    400: failure('A query parameter is not valid', 'limit must be less than or equal to 100'),
  },
  unmatched: { 400: failure('A file path that is not valid percent-encoding', 'failed to decode') },
};
