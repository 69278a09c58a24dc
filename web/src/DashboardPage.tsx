import { useEffect, useState } from 'react';
import { fetchMe, goTo, logout, type Me } from './api.js';
import { messages } from './messages.js';

export function DashboardPage() {
  const me = useCurrentUser();
  const [loggingOut, setLoggingOut] = useState(false);
  const [logoutFailed, setLogoutFailed] = useState(false);

  useEffect(() => {
    document.title = messages.dashboardTitle;
  }, []);

  async function signOut() {
    setLoggingOut(true);
    setLogoutFailed(false);
    if (await logout()) {
      goTo('/login');
      return;
    }
    setLogoutFailed(true);
    setLoggingOut(false);
  }

  if (me?.kind === 'failed') {
    return (
      <main className="card">
        <p className="error" role="alert">
          {messages.loadFailed}
        </p>
      </main>
    );
  }
  if (me?.kind !== 'user') {
    return (
      <main className="card">
        <p>{messages.loading}</p>
      </main>
    );
  }
  return (
    <main className="card">
      <h1>{messages.dashboardTitle}</h1>
      <p>{messages.welcome(me.user.email)}</p>
      <p>{messages.role(me.user.role)}</p>
      {me.user.role === 'admin' && <AdminMenu />}
      <button type="button" onClick={signOut} disabled={loggingOut}>
        {loggingOut ? messages.loggingOut : messages.logoutButton}
      </button>
      {logoutFailed && (
        <p className="error" role="alert">
          {messages.logoutFailed}
        </p>
      )}
    </main>
  );
}

/** Presentation only: anything an administrator may do is checked again on the server. */
function AdminMenu() {
  return (
    <section className="admin" aria-labelledby="admin-menu">
      <h2 id="admin-menu">{messages.adminMenu}</h2>
      <ul>
        <li>{messages.userManagement}</li>
        <li>{messages.systemSettings}</li>
      </ul>
    </section>
  );
}

/**
 * The signed-in user from /api/me, asked again whenever the page comes back into view; a 401
 * (the session ended or expired) sends the browser to /login.
 */
function useCurrentUser(): Me | undefined {
  const [me, setMe] = useState<Me>();

  useEffect(() => {
    let active = true;
    const refresh = async () => {
      const answer = await fetchMe();
      if (!active) return;
      if (answer.kind === 'signed-out') goTo('/login');
      else setMe(answer);
    };
    const onVisible = () => document.visibilityState === 'visible' && void refresh();
    // A page restored from the back/forward cache skipped the server's check: ask the server again.
    const onPageShow = (event: PageTransitionEvent) => event.persisted && window.location.reload();
    void refresh();
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('pageshow', onPageShow);
    return () => {
      active = false;
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('pageshow', onPageShow);
    };
  }, []);

  return me;
}
