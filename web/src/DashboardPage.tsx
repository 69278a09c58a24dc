import { useRef, useState } from 'react';
import { ActionButton } from './ActionButton.js';
import { AdminMenu } from './AdminMenu.js';
import { endOtherSessions, goTo, logout } from './api.js';
import { Header } from './Header.js';
import { LiveRegion } from './LiveRegion.js';
import { messages } from './messages.js';
import type { User } from './pageState.js';
import { useSession } from './useSession.js';

type LogoutState = 'idle' | 'pending' | 'failed';
type OthersState =
  { kind: 'idle' } | { kind: 'pending' } | { kind: 'ended'; ended: number } | { kind: 'failed' };

export function DashboardPage({ initialUser }: { initialUser: User }) {
  const { user, announceLogout } = useSession(initialUser);
  const [logoutState, setLogoutState] = useState<LogoutState>('idle');
  const leaving = useRef(false);
  const [others, setOthers] = useState<OthersState>({ kind: 'idle' });
  const endingOthers = useRef(false);

  async function signOutElsewhere() {
    if (endingOthers.current) return;
    endingOthers.current = true;
    setOthers({ kind: 'pending' });
    const outcome = await endOtherSessions();
    if (outcome.kind === 'signed-out') return goTo('/login');
    setOthers(
      outcome.kind === 'done' ? { kind: 'ended', ended: outcome.value.ended } : { kind: 'failed' },
    );
    endingOthers.current = false;
  }
  const othersText =
    others.kind === 'ended'
      ? messages.otherSessionsEnded(others.ended)
      : others.kind === 'failed'
        ? messages.actionFailed
        : '';

  async function signOut() {
    if (leaving.current) return;
    leaving.current = true;
    setLogoutState('pending');
    if (await logout()) {
      announceLogout();
      goTo('/login');
      return;
    }
    leaving.current = false;
    setLogoutState('failed');
  }

  return (
    <>
      <Header>
        <ActionButton
          type="button"
          className="secondary"
          label={messages.logoutButton}
          busyLabel={messages.loggingOut}
          busy={logoutState === 'pending'}
          onClick={signOut}
        />
      </Header>
      <main className="card">
        <h1>{messages.dashboardTitle}</h1>
        <p className="welcome">{messages.welcome(user.email)}</p>
        <p>{messages.role(user.role)}</p>
        {user.role === 'admin' && <AdminMenu />}
        <section className="other-devices" aria-labelledby="other-devices">
          <h2 id="other-devices">{messages.otherDevices}</h2>
          <p>{messages.otherDevicesText}</p>
          <ActionButton
            type="button"
            className="secondary"
            label={messages.endOtherSessions}
            busyLabel={messages.endingOtherSessions}
            busy={others.kind === 'pending'}
            onClick={signOutElsewhere}
          />
          {othersText && (
            <p className={others.kind === 'failed' ? 'notice error' : 'notice'}>{othersText}</p>
          )}
        </section>
        {logoutState === 'failed' && <p className="error">{messages.logoutFailed}</p>}
        <LiveRegion
          text={
            logoutState === 'pending'
              ? messages.loggingOut
              : logoutState === 'failed'
                ? messages.logoutFailed
                : others.kind === 'pending'
                  ? messages.endingOtherSessions
                  : othersText
          }
        />
      </main>
    </>
  );
}
