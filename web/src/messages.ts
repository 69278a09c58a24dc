/** Every string the pages show. */
export const messages = {
  loginTitle: 'ログイン',
  emailLabel: 'メールアドレス',
  passwordLabel: 'パスワード',
  loginButton: 'ログイン',
  loggingIn: 'ログイン中…',
  loginFailed: 'ログインに失敗しました',

  dashboardTitle: 'ダッシュボード',
  welcome: (email: string) => `ようこそ、${email} さん`,
  role: (role: string) => `ロール: ${role}`,
  logoutButton: 'ログアウト',
  loggingOut: 'ログアウト中…',
  logoutFailed: 'ログアウトに失敗しました',
  loading: '読み込み中…',
  loadFailed: 'ユーザ情報を取得できませんでした',
  adminMenu: '管理メニュー',
  userManagement: 'ユーザ管理',
  systemSettings: 'システム設定',
} as const;
