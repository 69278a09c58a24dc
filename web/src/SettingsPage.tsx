import { messages } from './messages.js';
import type { Settings, User } from './pageState.js';
import { SignedInHeader } from './SignedInHeader.js';
import { useSession } from './useSession.js';

/**
 * The effective settings an administrator may read, as the server ran with them when it sent the
 * page.
 */
export function SettingsPage({ initialUser, settings }: { initialUser: User; settings: Settings }) {
  useSession(initialUser);
  const { sessions, throttling, audit, trustProxy, allowedHosts } = settings;
  const rows: [string, string][] = [
    [messages.settingSessionStore, messages.storeNames[sessions.store]],
    [messages.settingSessionTtl, messages.seconds(sessions.ttlSeconds)],
    [messages.settingSessionMax, sessions.max.toLocaleString('en')],
    [messages.settingSessionMaxPerUser, String(sessions.maxPerUser)],
    [
      messages.settingThrottlePair,
      messages.failuresPer(throttling.perPair, throttling.pairWindowSeconds),
    ],
    [
      messages.settingThrottleAccount,
      messages.failuresPer(throttling.perAccount, throttling.accountWindowSeconds),
    ],
    [
      messages.settingThrottleAddress,
      messages.failuresPer(throttling.perAddress, throttling.addressWindowSeconds),
    ],
    [messages.settingWaitingPerAddress, messages.attempts(throttling.waitingPerAddress)],
    [messages.settingDeviceTrust, messages.days(throttling.deviceTrustDays)],
    [messages.settingAuditRetention, messages.days(audit.retentionDays)],
    [messages.settingAuditMax, audit.maxEvents.toLocaleString('en')],
    [messages.settingAuditRate, messages.eventsPer(audit.perClient, audit.windowSeconds)],
    [messages.settingAuditClients, messages.clientsPer(audit.maxClients, audit.windowSeconds)],
    [
      messages.settingTrustProxy,
      trustProxy === null
        ? messages.none
        : Array.isArray(trustProxy)
          ? trustProxy.join(', ')
          : String(trustProxy),
    ],
    [
      messages.settingAllowedHosts,
      allowedHosts === null ? messages.anyHost : allowedHosts.join(', '),
    ],
    [messages.settingProduction, settings.production ? messages.yes : messages.no],
    [messages.settingHashCost, String(settings.passwordHashCost)],
  ];
  return (
    <>
      <SignedInHeader />
      <main className="card wide">
        <h1>{messages.systemSettings}</h1>
        <p>{messages.settingsDescription}</p>
        <dl className="settings">
          {rows.map(([name, value]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      </main>
    </>
  );
}
