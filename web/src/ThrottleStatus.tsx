import type { ReactNode } from 'react';
import { messages } from './messages.js';
import type { AccountThrottle } from './pageState.js';

/**
 * Whether an account's logins from untrusted clients are blocked. `action` (the unlock button) is
 * shown only while it is.
 */
export function ThrottleStatus({
  throttle,
  action,
}: {
  throttle: AccountThrottle;
  action: ReactNode;
}) {
  if (throttle.retryAfterSeconds === null) return <p>{messages.notBlocked}</p>;
  return (
    <>
      <p className="notice error">{messages.blocked}</p>
      <p>{messages.blockedAccount(throttle.failures, throttle.retryAfterSeconds)}</p>
      {action}
    </>
  );
}
