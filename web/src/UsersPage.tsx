import { useRef, useState } from 'react';
import { ActionButton } from './ActionButton.js';
import { endAccountSessions, endSession, fetchAccounts, goTo, type Outcome } from './api.js';
import { LiveRegion } from './LiveRegion.js';
import { messages, roleName } from './messages.js';
import type { AccountSessions, User } from './pageState.js';
import { SignedInHeader } from './SignedInHeader.js';
import { Time } from './Time.js';
import { useSession } from './useSession.js';

type Ending = () => Promise<Outcome<{ ended: number }>>;

/**
 * Every account with its live sessions, each of which an administrator can end, or all of an
 * account's at once. After each ending the list is asked for again, so that it shows what the
 * server holds. The server checks the role of every request; when it no longer finds a session
 * (the administrator ended their own) the browser goes to /login.
 */
export function UsersPage({ initialUser, initialAccounts }: { initialUser: User; initialAccounts: AccountSessions[] }) {
  useSession(initialUser);
  const [accounts, setAccounts] = useState(initialAccounts);
  const [running, setRunning] = useState<string>();
  const [result, setResult] = useState<{ text: string; failed: boolean }>();
  // Read at once, unlike state: a second press in the same tick must already see the first.
  const busy = useRef(false);

  async function end(key: string, ending: Ending) {
    if (busy.current) return;
    busy.current = true;
    setRunning(key);
    setResult(undefined);
    const outcome = await ending();
    const refreshed = await fetchAccounts();
    if (outcome.kind === 'signed-out' || refreshed.kind === 'signed-out') return goTo('/login');
    // The role was checked again and refused: the server's page says so.
    if (outcome.kind === 'forbidden' || refreshed.kind === 'forbidden') return window.location.reload();
    if (refreshed.kind === 'done') setAccounts(refreshed.value.users);
    const ended = outcome.kind === 'done' ? outcome.value.ended : outcome.kind === 'missing' ? 0 : undefined;
    setResult(ended === undefined ? { text: messages.actionFailed, failed: true } : { text: messages.sessionsEnded(ended), failed: false });
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
              <span className="email">{account.email}</span> <span className="tag">{roleName(account.role)}</span>
            </h2>
            {account.sessions.length === 0 ? (
              <p>{messages.noSessions}</p>
            ) : (
              <>
                <div className="table-scroll">
                  <table>
                    <caption className="visually-hidden">{messages.sessionsOf(account.email)}</caption>
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
                              busy={running === session.id}
                              onClick={() => void end(session.id, () => endSession(session.id))}
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
                  busy={running === `account ${account.id}`}
                  onClick={() => void end(`account ${account.id}`, () => endAccountSessions(account.id))}
                />
              </>
            )}
          </section>
        ))}
        {result && <p className={result.failed ? 'notice error' : 'notice'}>{result.text}</p>}
        <LiveRegion text={running ? messages.ending : (result?.text ?? '')} />
      </main>
    </>
  );
}
