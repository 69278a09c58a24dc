import { useRef, useState } from 'react';
import { AccountEvents } from './AccountEvents.js';
import { ActionButton } from './ActionButton.js';
import {
  endAccountSessions,
  endSession,
  fetchAccounts,
  goTo,
  unlockAccount,
  type Outcome,
} from './api.js';
import { LiveRegion } from './LiveRegion.js';
import { messages, roleName } from './messages.js';
import type { AccountOverview, User } from './pageState.js';
import { SignedInHeader } from './SignedInHeader.js';
import { ThrottleStatus } from './ThrottleStatus.js';
import { Time } from './Time.js';
import { useSession } from './useSession.js';

/**
 * An action of the page: what it says while it runs, its call, and the words for its answer
 * (undefined: it failed).
 */
interface Action<T> {
  progress: string;
  run: () => Promise<Outcome<T>>;
  said: (outcome: Outcome<T>) => string | undefined;
}

/** An ending: how many sessions it ended (none when the session was gone already). */
const ending = (run: () => Promise<Outcome<{ ended: number }>>): Action<{ ended: number }> => ({
  progress: messages.ending,
  run,
  said: (outcome) =>
    outcome.kind === 'done'
      ? messages.sessionsEnded(outcome.value.ended)
      : outcome.kind === 'missing'
        ? messages.sessionsEnded(0)
        : undefined,
});

const unlocking = (userId: string): Action<unknown> => ({
  progress: messages.unlocking,
  run: () => unlockAccount(userId),
  said: (outcome) => (outcome.kind === 'done' ? messages.unlocked : undefined),
});

/**
 * Every account with its live sessions, its login throttling and its latest security events. An
 * administrator can end a session, or all of an account's at once, and unblock an account. After
 * each action the accounts are asked for again, so that the page shows what the server holds. The
 * server checks the role of every request; when it no longer finds a session (the administrator
 * ended their own) the browser goes to /login.
 */
export function UsersPage({
  initialUser,
  initialAccounts,
}: {
  initialUser: User;
  initialAccounts: AccountOverview[];
}) {
  useSession(initialUser);
  const [accounts, setAccounts] = useState(initialAccounts);
  const [running, setRunning] = useState<{ key: string; progress: string }>();
  const [result, setResult] = useState<{ text: string; failed: boolean }>();
  // Read at once, unlike state: a second press in the same tick must already see the first.
  const busy = useRef(false);

  async function act<T>(key: string, { progress, run, said }: Action<T>) {
    if (busy.current) return;
    busy.current = true;
    setRunning({ key, progress });
    setResult(undefined);
    const outcome = await run();
    const refreshed = await fetchAccounts();
    if (outcome.kind === 'signed-out' || refreshed.kind === 'signed-out') return goTo('/login');
    // The role was checked again and refused: the server's page says so.
    if (outcome.kind === 'forbidden' || refreshed.kind === 'forbidden')
      return window.location.reload();
    if (refreshed.kind === 'done') setAccounts(refreshed.value.users);
    const text = said(outcome);
    setResult(
      text === undefined ? { text: messages.actionFailed, failed: true } : { text, failed: false },
    );
    setRunning(undefined);
    busy.current = false;
  }

  return (
    <>
      <SignedInHeader />
      <main className="card wide">
        <h1>{messages.userManagement}</h1>
        {accounts.map((account) => (
          <section key={account.id} className="account" aria-labelledby={`account-${account.id}`}>
            <h2 id={`account-${account.id}`}>
              <span className="email">{account.email}</span>{' '}
              <span className="tag">{roleName(account.role)}</span>
            </h2>
            <h3>{messages.loginThrottling}</h3>
            <ThrottleStatus
              throttle={account.throttle}
              action={
                <ActionButton
                  type="button"
                  className="secondary"
                  label={messages.unlock}
                  busyLabel={messages.unlocking}
                  busy={running?.key === `unlock ${account.id}`}
                  onClick={() => void act(`unlock ${account.id}`, unlocking(account.id))}
                />
              }
            />
            <h3>{messages.sessions}</h3>
            {account.sessions.length === 0 ? (
              <p>{messages.noSessions}</p>
            ) : (
              <>
                <div className="table-scroll">
                  <table>
                    <caption className="visually-hidden">
                      {messages.sessionsOf(account.email)}
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">{messages.startedAt}</th>
                        <th scope="col">{messages.lastSeenAt}</th>
                        <th scope="col">{messages.expiresAt}</th>
                        <th scope="col">{messages.address}</th>
                        <th scope="col">{messages.userAgent}</th>
                        <th scope="col">{messages.actions}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {account.sessions.map((session) => (
                        <tr key={session.id}>
                          <td>
                            <Time iso={session.createdAt} />
                            {session.current && <span className="tag">{messages.thisDevice}</span>}
                          </td>
                          <td>
                            <Time iso={session.lastSeenAt} />
                          </td>
                          <td>
                            <Time iso={session.expiresAt} />
                          </td>
                          <td>{session.address}</td>
                          <td className="user-agent">{session.userAgent}</td>
                          <td>
                            <ActionButton
                              type="button"
                              className="secondary"
                              label={messages.endSession}
                              busyLabel={messages.ending}
                              busy={running?.key === session.id}
                              onClick={() =>
                                void act(
                                  session.id,
                                  ending(() => endSession(session.id)),
                                )
                              }
                            />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <ActionButton
                  type="button"
                  className="secondary"
                  label={messages.endAllSessions}
                  busyLabel={messages.ending}
                  busy={running?.key === `account ${account.id}`}
                  onClick={() =>
                    void act(
                      `account ${account.id}`,
                      ending(() => endAccountSessions(account.id)),
                    )
                  }
                />
              </>
            )}
            <h3>{messages.recentEvents}</h3>
            <AccountEvents email={account.email} events={account.events} />
          </section>
        ))}
        {result && <p className={result.failed ? 'notice error' : 'notice'}>{result.text}</p>}
        <LiveRegion text={running?.progress ?? result?.text ?? ''} />
      </main>
    </>
  );
}
