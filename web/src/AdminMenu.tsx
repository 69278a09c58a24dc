import { messages } from './messages.js';

/**
 * The administrator's items. One with `href` is shown as a link to its page; one without has no
 * page yet and is shown as plain text, marked as not yet available.
 */
const ITEMS: { label: string; href?: string }[] = [{ label: messages.userManagement }, { label: messages.systemSettings }];

/** Presentation only: anything an administrator may do is checked again on the server. */
export function AdminMenu() {
  return (
    <section className="admin" aria-labelledby="admin-menu">
      <h2 id="admin-menu">{messages.adminMenu}</h2>
      <ul>
        {ITEMS.map(({ label, href }) => (
          <li key={label}>
            {href ? (
              <a href={href}>{label}</a>
            ) : (
              <>
                <span>{label}</span>
                <span className="tag">{messages.notYetAvailable}</span>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
