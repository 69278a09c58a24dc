/**
 * The open tabs of this origin telling each other that the session ended, so that none keeps
 * showing the dashboard (the email, the admin menu) after a logout in another. The cookie is
 * shared by every tab, so a logout in one is a logout in all.
 */
export interface SessionChannel {
  /** Tells every other tab; this one is not told. */
  announceLogout(): void;
  close(): void;
}

const NAME = 'session';
const LOGGED_OUT = 'logged-out';

export function openSessionChannel(onLogoutElsewhere: () => void): SessionChannel {
  const channel = new BroadcastChannel(NAME);
  channel.onmessage = (event: MessageEvent) => event.data === LOGGED_OUT && onLogoutElsewhere();
  return {
    announceLogout: () => channel.postMessage(LOGGED_OUT),
    close: () => channel.close(),
  };
}
