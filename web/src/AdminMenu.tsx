import { Link } from 'react-router-dom';
import { messages } from './messages.js';

const ITEMS = [
  { label: messages.userManagement, href: '/admin/users' },
  { label: messages.systemSettings, href: '/admin/settings' },
];

/**
 * Presentation only: each page, and anything an administrator may do there, is checked again on
 * the server, which every link reaches with a full page load.
 */
export function AdminMenu() {
  return (
    <section className="admin" aria-labelledby="admin-menu">
      <h2 id="admin-menu">{messages.adminMenu}</h2>
      <ul>
        {ITEMS.map(({ label, href }) => (
          <li key={href}>
            <Link to={href} reloadDocument>
              {label}
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
