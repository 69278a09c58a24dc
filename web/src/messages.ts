import type { Role } from './pageState.js';

/** Roles in words, with the code the API uses beside them. */
const ROLE_NAMES: Record<Role, string> = {
  admin: '管理者',
  user: '一般ユーザー',
};

/** Every string the pages show; those of the spec exactly as it words them. */
export const messages = {
  serviceName: 'セッションログインサービス',

  loginTitle: 'ログイン',
  loginDescription: 'メールアドレスとパスワードでセッションログインサービスにログインします。',
  emailLabel: 'メールアドレス',
  passwordLabel: 'パスワード',
  loginButton: 'ログイン',
  loggingIn: 'ログイン中…',
  loginFailed: 'ログインに失敗しました',
  needsJavaScript: 'ログインには JavaScript が必要です。ブラウザーの設定で JavaScript を有効にしてください。',

  dashboardTitle: 'ダッシュボード',
  dashboardDescription: 'ログイン中のアカウントのメールアドレスとロールを表示します。',
  welcome: (email: string) => `ようこそ、${email} さん`,
  role: (role: Role) => `ロール: ${ROLE_NAMES[role]} (${role})`,
  logoutButton: 'ログアウト',
  loggingOut: 'ログアウト中…',
  logoutFailed: 'ログアウトに失敗しました',
  adminMenu: '管理メニュー',
  userManagement: 'ユーザ管理',
  systemSettings: 'システム設定',
  notYetAvailable: '準備中',
} as const;
