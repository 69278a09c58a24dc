import type { ReactNode } from 'react';
import { messages } from './messages.js';
import type { AccountThrottle } from './pageState.js';

/**
 * Whether an account's logins are blocked, and by what: the account's limit for untrusted
 * clients, or a client's own. `action` (the unlock button) is shown only while it is blocked.
 */
export function ThrottleStatus({
  throttle,
  action,
}: {
  throttle: AccountThrottle;
  action: ReactNode;
}) {
  if (!throttle.blocked) return <p>{messages.notBlocked}</p>;
  const { account, clients } = throttle;
  return (
    <>
      <p className="notice error">{messages.blocked}</p>
      <ul className="blocks">
        {account.retryAfterSeconds !== null && (
          <li>{messages.blockedAccount(account.failures, account.retryAfterSeconds)}</li>
        )}
        {clients.map(({ address, failures, retryAfterSeconds }, index) =>
          retryAfterSeconds === null ? null : (
            <li key={address ?? `device ${index}`}>
              {messages.blockedClient(address, failures, retryAfterSeconds)}
            </li>
          ),
        )}
      </ul>
      {action}
    </>
  );
}
