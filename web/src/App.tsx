import { DashboardPage } from './DashboardPage.js';
import { LoginPage } from './LoginPage.js';
import type { PageState } from './pageState.js';

/**
 * The page the server chose, rendered the same way on the server and in the browser. Moving
 * between pages is a full navigation (see api.ts goTo), so that /dashboard always passes the
 * server's session check first.
 */
export function App({ state }: { state: PageState }) {
  return state.page === 'dashboard' ? <DashboardPage initialUser={state.user} /> : <LoginPage />;
}
