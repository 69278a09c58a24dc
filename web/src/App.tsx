import type { ReactNode } from 'react';
import { Route, Routes } from 'react-router-dom';
import { DashboardPage } from './DashboardPage.js';
import { ForbiddenPage } from './ForbiddenPage.js';
import { LoginPage } from './LoginPage.js';
import type { PageState } from './pageState.js';
import { SettingsPage } from './SettingsPage.js';
import { UsersPage } from './UsersPage.js';

/**
 * The pages by path, rendered the same way by the server (a static router at the requested path)
 * and in the browser (the browser's router), from the state the server's checks produced. Moving
 * to another page is a full navigation (links with `reloadDocument`, and api.ts goTo), so that
 * every page but /login passes the server's session check first, and the administrators' pages
 * its role check: nothing here decides who may see a page.
 */
export function App({ state }: { state: PageState }) {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route
        path="/dashboard"
        element={shown(state, 'dashboard', ({ user }) => (
          <DashboardPage initialUser={user} />
        ))}
      />
      <Route
        path="/admin/users"
        element={shown(state, 'users', ({ user, accounts }) => (
          <UsersPage initialUser={user} initialAccounts={accounts} />
        ))}
      />
      <Route
        path="/admin/settings"
        element={shown(state, 'settings', ({ user, settings }) => (
          <SettingsPage initialUser={user} settings={settings} />
        ))}
      />
    </Routes>
  );
}

type SignedInPage = Exclude<PageState['page'], 'login' | 'forbidden'>;

/**
 * The route's page with what the server sent for it; the forbidden page where the role check
 * refused it.
 */
function shown<P extends SignedInPage>(
  state: PageState,
  page: P,
  render: (state: Extract<PageState, { page: P }>) => ReactNode,
): ReactNode {
  if (state.page === page) return render(state as Extract<PageState, { page: P }>);
  if (state.page === 'forbidden') return <ForbiddenPage initialUser={state.user} />;
  // The server sends each path with its own state (or the forbidden one): nothing else reaches
  // here.
  return null;
}
