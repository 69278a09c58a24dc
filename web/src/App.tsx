import { DashboardPage } from './DashboardPage.js';
import { ForbiddenPage } from './ForbiddenPage.js';
import { LoginPage } from './LoginPage.js';
import type { PageState } from './pageState.js';
import { SettingsPage } from './SettingsPage.js';
import { UsersPage } from './UsersPage.js';

/**
 * The page the server chose, rendered the same way on the server and in the browser. Moving
 * between pages is a full navigation (see api.ts goTo, and plain links), so that every page
 * but /login passes the server's session check first, and the administrators' pages its role
 * check.
 */
export function App({ state }: { state: PageState }) {
  switch (state.page) {
    case 'login':
      return <LoginPage />;
    case 'dashboard':
      return <DashboardPage initialUser={state.user} />;
    case 'users':
      return <UsersPage initialUser={state.user} initialAccounts={state.accounts} />;
    case 'settings':
      return <SettingsPage initialUser={state.user} settings={state.settings} />;
    case 'forbidden':
      return <ForbiddenPage initialUser={state.user} />;
  }
}
