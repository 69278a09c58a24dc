import { useEffect, useRef, useState } from 'react';
import { fetchMe, goTo } from './api.js';
import type { User } from './pageState.js';
import { openSessionChannel, type SessionChannel } from './sessionChannel.js';

/**
 * The signed-in user, as the server rendered the page for, kept true while the page stays open:
 * asked again of /api/me whenever the tab comes back (shown again or focused); a 401 there, or a
 * logout in another tab, sends this one to /login. `announceLogout` tells the other tabs.
 */
export function useSession(initialUser: User): { user: User; announceLogout: () => void } {
  const [user, setUser] = useState(initialUser);
  const channel = useRef<SessionChannel>(undefined);

  useEffect(() => {
    let active = true;
    let checking = false;
    const check = async () => {
      // Showing the tab again focuses it too: one question is enough.
      if (checking) return;
      checking = true;
      const answer = await fetchMe();
      checking = false;
      if (!active) return;
      if (answer.kind === 'signed-out') goTo('/login');
      else if (answer.kind === 'user') setUser(answer.user);
      // A failed check (network, server) says nothing about the session: the page stays as it is.
    };
    const onVisible = () => document.visibilityState === 'visible' && void check();
    const onFocus = () => void check();
    // A page restored from the back/forward cache skipped the server's check: ask the server again.
    const onPageShow = (event: PageTransitionEvent) => event.persisted && window.location.reload();
    channel.current = openSessionChannel(() => goTo('/login'));
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('focus', onFocus);
    window.addEventListener('pageshow', onPageShow);
    return () => {
      active = false;
      channel.current?.close();
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('focus', onFocus);
      window.removeEventListener('pageshow', onPageShow);
    };
  }, []);

  return { user, announceLogout: () => channel.current?.announceLogout() };
}
