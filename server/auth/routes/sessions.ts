import { forbidden } from '../../http/errors.js';
import { route } from '../../http/route.js';
import { requestFacts, type AuditTrail } from '../auditLog.js';
import { messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { requireSignedIn, type SessionStore, type SignedInCheck } from '../sessions.js';
import { presentSession, sessionList } from '../presenters.js';
import { crossSite, Ended, endedBy, endSessionRoute, signedOut } from './outcomes.js';

export interface OwnSessionRoutesDeps {
  sessions: SessionStore;
  signedIn: SignedInCheck;
  audit: AuditTrail;
}

/**
 * A signed-in user's own sessions: every browser they are signed in with, and ending the others.
 */
export function ownSessionRoutes({ sessions, signedIn, audit }: OwnSessionRoutesDeps) {
  return [
    route(
      'GET /api/sessions',
      {
        summary: 'My Sessions',
        description:
          "The signed-in user's live sessions, oldest first; `current` marks this request's.",
        session: true,
        responses: {
          200: {
            description: 'The sessions',
            schema: {
              type: 'object',
              title: 'MySessions',
              properties: { sessions: sessionList('Oldest first') },
              required: ['sessions'],
            },
          },
          ...signedOut,
        },
      },
      async (ctx) => {
        const { user, sessionId } = await requireSignedIn(ctx, signedIn);
        ctx.body = {
          sessions: (await sessions.list(user.id)).map((session) =>
            presentSession(session, sessionId),
          ),
        };
      },
    ),

    route(
      'DELETE /api/sessions',
      {
        summary: 'End My Other Sessions',
        description:
          "Ends every session of the signed-in user but this request's: signs out every other browser.",
        session: true,
        responses: {
          200: { description: 'The other sessions ended', schema: Ended },
          ...signedOut,
          ...crossSite,
        },
      },
      async (ctx) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        const { user, sessionId } = await requireSignedIn(ctx, signedIn);
        const ended = await sessions.endAllOf(user.id, sessionId);
        if (ended > 0)
          audit.record(
            'session.ended',
            requestFacts(ctx),
            { userId: user.id },
            endedBy('owner', user, ended),
          );
        ctx.body = { ended };
      },
    ),

    endSessionRoute(
      'DELETE /api/sessions/{id}',
      {
        summary: 'End My Session',
        description:
          "Ends one of the signed-in user's sessions (ending this request's own is logging out, without deleting the cookie).",
        by: 'owner',
      },
      { sessions, signedIn, audit },
    ),
  ];
}
