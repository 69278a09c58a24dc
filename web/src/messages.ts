import type { AuditEventType, Role } from './pageState.js';

/** Roles in words, with the code the API uses beside them. */
const ROLE_NAMES: Record<Role, string> = {
  admin: '管理者',
  user: '一般ユーザー',
};

/** The types of security events in words, with the code the API uses beside them. */
const EVENT_NAMES: Record<AuditEventType, string> = {
  'login.succeeded': 'ログイン成功',
  'login.failed': 'ログイン失敗',
  'login.throttled': 'ログイン制限による拒否',
  logout: 'ログアウト',
  'session.ended': 'セッション終了',
  'account.unlocked': 'ブロック解除',
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
  needsJavaScript:
    'ログインには JavaScript が必要です。ブラウザーの設定で JavaScript を有効にしてください。',

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

  otherDevices: 'ほかの端末',
  otherDevicesText:
    'このアカウントでほかの端末やブラウザーからもログインしている場合、' +
    'それらをまとめてログアウトできます。',
  endOtherSessions: 'ほかの端末のセッションを終了',
  endingOtherSessions: 'セッションを終了しています…',
  otherSessionsEnded: (ended: number) =>
    ended === 0
      ? 'ほかにログイン中の端末はありません'
      : `ほかの端末の ${ended} 件のセッションを終了しました`,
  actionFailed: '操作に失敗しました。もう一度お試しください',

  backToDashboard: 'ダッシュボードに戻る',
  usersDescription:
    'アカウントごとにログイン中のセッション、ログイン制限、' +
    '最近のイベントを表示し、セッションの終了やブロックの解除を行います。',
  sessionsOf: (email: string) => `${email} のセッション`,
  noSessions: 'ログイン中のセッションはありません',
  startedAt: '開始',
  lastSeenAt: '最終アクセス',
  expiresAt: '有効期限',
  address: 'アドレス',
  userAgent: 'ブラウザー',
  actions: '操作',
  thisDevice: 'この端末',
  endSession: '終了',
  endAllSessions: 'すべて終了',
  ending: '終了しています…',
  sessionsEnded: (ended: number) =>
    ended === 0 ? 'セッションはすでに終了していました' : `${ended} 件のセッションを終了しました`,
  sessions: 'セッション',
  loginThrottling: 'ログイン制限',
  notBlocked: 'ブロックされていません',
  blocked: 'ログイン失敗が多すぎるため、ブロックされています',
  blockedAccount: (failures: number, seconds: number) =>
    `信頼済みでない端末すべて: ${failures} 回失敗、あと ${seconds} 秒`,
  unlock: 'ブロック解除',
  unlocking: 'ブロックを解除しています…',
  unlocked: 'ブロックを解除しました',
  recentEvents: '最近のイベント',
  eventsOf: (email: string) => `${email} の最近のイベント`,
  noEvents: '記録されたイベントはありません',
  eventTime: '日時',
  eventType: '種類',
  eventDetail: '詳細',
  eventName: (type: AuditEventType) => `${EVENT_NAMES[type]} (${type})`,

  settingsDescription:
    'セッション、ログイン、監査ログ、プロキシに関する実効設定を表示します (読み取り専用)。',
  settingSessionStore: 'セッションの保存先 (SESSION_STORE)',
  settingSessionTtl: 'セッションの有効期間 (SESSION_TTL_SECONDS)',
  settingSessionMax: '最大セッション数 (SESSION_MAX)',
  settingSessionMaxPerUser: 'アカウントごとの最大セッション数 (SESSION_MAX_PER_USER)',
  settingThrottlePair: 'ログイン失敗の上限: アカウントと接続元ごと',
  settingThrottleAccount: 'ログイン失敗の上限: アカウントごと (信頼済みでない端末)',
  settingThrottleAddress:
    'ログイン失敗の上限: 接続元ごと (すべてのアカウントと未登録のメールアドレス)',
  settingWaitingPerAddress: '接続元ごとの待機できるログイン試行 (プロセスごと)',
  settingDeviceTrust: '信頼済み端末の有効期間 (DEVICE_TRUST_DAYS)',
  settingTrustProxy: '信頼するプロキシ (TRUST_PROXY)',
  settingAllowedHosts: '受け付けるホスト名 (AUTH_ALLOWED_HOSTS)',
  settingProduction: '本番モード (NODE_ENV=production)',
  settingHashCost: 'パスワードハッシュのコスト (PASSWORD_HASH_COST)',
  settingAuditRetention: '監査ログの保存期間 (AUDIT_RETENTION_DAYS)',
  settingAuditMax: '監査ログの最大件数 (AUDIT_MAX_EVENTS)',
  settingAuditRate: '監査ログに 1 件ずつ記録するイベント: 種類と接続元ごと',
  settingAuditClients: '監査ログで区別する接続元の数',
  eventsPer: (events: number, seconds: number) =>
    `${seconds} 秒に ${events} 件まで (超えた分は件数だけ記録)`,
  clientsPer: (clients: number, seconds: number) =>
    `${seconds} 秒に ${clients.toLocaleString('en')} 件まで (超えた接続元はまとめて件数だけ記録)`,
  storeNames: { memory: 'プロセスのメモリー (memory)', postgres: 'PostgreSQL (postgres)' },
  seconds: (seconds: number) => `${seconds} 秒`,
  failuresPer: (failures: number, seconds: number) => `${seconds} 秒に ${failures} 回`,
  attempts: (count: number) => `${count} 件まで`,
  days: (days: number) => `${days} 日`,
  none: 'なし',
  anyHost: 'すべて',
  yes: 'はい',
  no: 'いいえ',

  forbiddenTitle: 'このページを表示する権限がありません',
  forbiddenText: 'このページは管理者だけが利用できます。',
} as const;

export const roleName = (role: Role) => ROLE_NAMES[role];
