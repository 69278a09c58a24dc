import { Link } from 'react-router-dom';
import { Header } from './Header.js';
import { messages } from './messages.js';

/** The header of the pages that lead off the dashboard: the way back to it. */
export function SignedInHeader() {
  return (
    <Header>
      <Link className="header-link" to="/dashboard" reloadDocument>
        {messages.backToDashboard}
      </Link>
    </Header>
  );
}
