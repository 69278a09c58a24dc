import { messages } from './messages.js';
import type { User } from './pageState.js';
import { SignedInHeader } from './SignedInHeader.js';
import { useSession } from './useSession.js';

/**
 * What a signed-in user who is not an administrator gets for an administrators' page (status 403).
 */
export function ForbiddenPage({ initialUser }: { initialUser: User }) {
  useSession(initialUser);
  return (
    <>
      <SignedInHeader />
      <main className="card">
        <h1>{messages.forbiddenTitle}</h1>
        <p>{messages.forbiddenText}</p>
      </main>
    </>
  );
}
