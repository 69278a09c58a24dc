import { messages } from './messages.js';
import type { AuditEventView } from './pageState.js';
import { Time } from './Time.js';

/** What an event says of itself, as `name: value` pairs. */
const detailText = (detail: AuditEventView['detail']) =>
  Object.entries(detail)
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join(', ');

/** An account's latest security events, newest first, as the audit trail keeps them. */
export function AccountEvents({ email, events }: { email: string; events: AuditEventView[] }) {
  if (events.length === 0) return <p>{messages.noEvents}</p>;
  return (
    <div className="table-scroll">
      <table>
        <caption className="visually-hidden">{messages.eventsOf(email)}</caption>
        <thead>
          <tr>
            <th scope="col">{messages.eventTime}</th>
            <th scope="col">{messages.eventType}</th>
            <th scope="col">{messages.address}</th>
            <th scope="col">{messages.eventDetail}</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <Time iso={event.time} />
              </td>
              <td>{messages.eventName(event.type)}</td>
              <td>{event.address}</td>
              <td className="detail">{detailText(event.detail)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
