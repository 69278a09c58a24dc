import { messageOutcomes } from '../http/openapi.js';

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
