import * as yup from 'yup';
import { forbidden, notFound } from '../../http/errors.js';
import { route, type JsonSchema } from '../../http/route.js';
import type { User } from '../accounts.js';
import { requestFacts, type AuditTrail, type EventDetail } from '../auditLog.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import {
  requireAdmin,
  requireSignedIn,
  type SessionStore,
  type SignedInCheck,
} from '../sessions.js';

/**
 * What the session routes have in common: a session id in the path, their failures, the count of
 * sessions ended, who ended them as the audit trail says it, ending one session.
 */

export const SessionId = yup.object({ id: yup.string().required() });

export const Ended: JsonSchema = {
  type: 'object',
  title: 'Ended',
  properties: {
    ended: { type: 'integer', minimum: 0, description: 'How many sessions were ended' },
  },
  required: ['ended'],
};

export const signedOut = {
  401: failure(
    'No `token` cookie (`unauthenticated`), or one that names no live session (`invalid session`)',
    messages.unauthenticated,
  ),
};

export const crossSite = {
  403: failure('Sent from a page of another site (Origin header)', messages.foreignRequest),
};

export const notAdmin = {
  403: failure(
    'The signed-in user is not an administrator (checked at every request)',
    messages.forbidden,
  ),
};

export const notAdminOrCrossSite = {
  403: failure(
    `The signed-in user is not an administrator (checked at every request), or the request was sent from a page of another site (Origin header; then the error is \`${messages.foreignRequest}\`)`,
    messages.forbidden,
  ),
};

/**
 * The detail of a `session.ended` event: by the sessions' owner, or by an administrator (`user`, by
 * id).
 */
export const endedBy = (by: 'owner' | 'admin', user: User, ended: number): EventDetail =>
  by === 'admin' ? { by, adminId: user.id, ended } : { by, ended };

/**
 * Ending one session by its id, the same operation for two callers: its owner (another user's
 * session is a 404, as if it did not exist) or an administrator (anyone's). Either way a page of
 * another site cannot send it.
 */
export function endSessionRoute(
  line: `DELETE /${string}`,
  doc: { summary: string; description: string; by: 'owner' | 'admin' },
  {
    sessions,
    signedIn,
    audit,
  }: { sessions: SessionStore; signedIn: SignedInCheck; audit: AuditTrail },
) {
  const { by, ...text } = doc;
  return route(
    line,
    {
      ...text,
      session: true,
      params: SessionId,
      responses: {
        200: { description: 'Ended', schema: Ended },
        404: failure(
          by === 'admin'
            ? 'No live session has this id'
            : 'The user has no live session with this id',
          messages.sessionNotFound,
        ),
        ...signedOut,
        ...(by === 'admin' ? notAdminOrCrossSite : crossSite),
      },
    },
    async (ctx, { params }) => {
      if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
      const { user } =
        by === 'admin' ? await requireAdmin(ctx, signedIn) : await requireSignedIn(ctx, signedIn);
      const ended = await sessions.end(params.id, by === 'admin' ? undefined : user.id);
      if (!ended) throw notFound(messages.sessionNotFound);
      audit.record(
        'session.ended',
        requestFacts(ctx),
        { userId: ended.userId },
        endedBy(by, user, 1),
      );
      ctx.body = { ended: 1 };
    },
  );
}
