import { useRef, useState } from 'react';
import { ActionButton } from './ActionButton.js';
import { AdminMenu } from './AdminMenu.js';
import { goTo, logout } from './api.js';
import { Header } from './Header.js';
import { LiveRegion } from './LiveRegion.js';
import { messages } from './messages.js';
import type { User } from './pageState.js';
import { useSession } from './useSession.js';

type LogoutState = 'idle' | 'pending' | 'failed';

export function DashboardPage({ initialUser }: { initialUser: User }) {
  const { user, announceLogout } = useSession(initialUser);
  const [logoutState, setLogoutState] = useState<LogoutState>('idle');
  const leaving = useRef(false);

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
        {logoutState === 'failed' && <p className="error">{messages.logoutFailed}</p>}
        <LiveRegion text={logoutState === 'pending' ? messages.loggingOut : logoutState === 'failed' ? messages.logoutFailed : ''} />
      </main>
    </>
  );
}
