import { messages } from './messages.js';

const ITEMS = [
  { label: messages.userManagement, href: '/admin/users' },
  { label: messages.systemSettings, href: '/admin/settings' },
];

/** Presentation only: each page, and anything an administrator may do there, is checked again on the server. */
export function AdminMenu() {
  return (
    <section className="admin" aria-labelledby="admin-menu">
      <h2 id="admin-menu">{messages.adminMenu}</h2>
      <ul>
        {ITEMS.map(({ label, href }) => (
          <li key={href}>
            <a href={href}>{label}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}
