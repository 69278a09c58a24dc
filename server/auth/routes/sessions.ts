import type { AuthServices } from '../index.js';
import { object, presentSession, SessionList } from '../presenters.js';
import { Ended, endSession, recordEnded, signedInRoutes } from './signedIn.js';

/** A signed-in user's own sessions: every browser they are signed in with, and ending them. */
export function ownSessionRoutes(deps: AuthServices) {
  const { sessions, audit } = deps;
  const signedInRoute = signedInRoutes(deps.signedIn);
  return [
    signedInRoute(
      'GET /api/sessions',
      {
        summary: 'My Sessions',
        responses: {
          200: {
            description: 'The sessions',
            schema: object('MySessions', { sessions: SessionList }),
          },
        },
      },
      async (_ctx, { user, sessionId }) => ({
        sessions: (await sessions.list(user.id)).map((session) =>
          presentSession(session, sessionId),
        ),
      }),
    ),

    signedInRoute(
      'DELETE /api/sessions',
      {
        summary: 'End My Other Sessions',
        responses: { 200: { description: 'The other sessions ended', schema: Ended } },
      },
      async (ctx, { user, sessionId }) => {
        const ended = await sessions.endAllOf(user.id, sessionId);
        recordEnded(audit, ctx, user.id, ended);
        return { ended };
      },
    ),

    endSession(
      signedInRoute,
      'DELETE /api/sessions/{id}',
      {
        summary: 'End My Session',
        description:
          "Ending this request's own session is logging out, without deleting the cookie.",
      },
      deps,
    ),
  ];
}
