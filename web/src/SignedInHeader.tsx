import { Header } from './Header.js';
import { messages } from './messages.js';

/** The header of the pages that lead off the dashboard: the way back to it. */
export function SignedInHeader() {
  return (
    <Header>
      <a className="header-link" href="/dashboard">
        {messages.backToDashboard}
      </a>
    </Header>
  );
}
