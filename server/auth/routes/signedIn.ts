import type { Context } from 'koa';
import * as yup from 'yup';
import { forbidden, notFound } from '../../http/errors.js';
import { route, type Input, type Outcomes } from '../../http/route.js';
import type { User } from '../accounts.js';
import { requestFacts, type AuditTrail, type EventDetail } from '../auditLog.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { object } from '../presenters.js';
import {
  requireAdmin,
  requireSignedIn,
  type SessionStore,
  type SignedIn,
  type SignedInCheck,
} from '../sessions.js';

type Fields<S> = S extends yup.Schema ? yup.InferType<S> : undefined;
type Spec<P, Q> = { summary: string; description?: string; params?: P; query?: Q };

const CROSS_SITE = 'Sent from a page of another site (Origin header)';
const NOT_ADMIN = 'The signed-in user is not an administrator (checked at every request)';

const signedOut = {
  401: failure(
    'No `token` cookie (`unauthenticated`), or one that names no live session (`invalid session`)',
    messages.unauthenticated,
  ),
};

/** The 403 of an operation of administrators (`admin`) or not, a change or a reading. */
function refusals(admin: boolean, change: boolean): Outcomes {
  if (!admin) return change ? { 403: failure(CROSS_SITE, messages.foreignRequest) } : {};
  const or = change ? `; or ${CROSS_SITE}, then \`${messages.foreignRequest}\`` : '';
  return { 403: failure(NOT_ADMIN + or, messages.forbidden) };
}

/** A path's `{id}`. */
export const ById = yup.object({ id: yup.string().required() });

export const Ended = object('Ended', {
  ended: { type: 'integer', minimum: 0, description: 'How many sessions were ended' },
});

/** Files the `ended` sessions of `userId`, if any, as ended by their owner or by `admin`. */
export function recordEnded(
  audit: AuditTrail,
  ctx: Context,
  userId: string,
  ended: number,
  admin?: User,
) {
  if (ended === 0) return;
  const by: EventDetail = admin
    ? { by: 'admin', adminId: admin.id, ended }
    : { by: 'owner', ended };
  audit.record('session.ended', requestFacts(ctx), { userId }, by);
}

/**
 * The operations of a signed-in user; those under /api/admin/ of administrators only, the role
 * checked at every request. A change (DELETE) sent from a page of another site is refused first.
 * The handler is given the signed-in user beside its input, and answers the body.
 */
export const signedInRoutes =
  (signedIn: SignedInCheck) =>
  <
    P extends yup.AnyObjectSchema | undefined = undefined,
    Q extends yup.AnyObjectSchema | undefined = undefined,
  >(
    line: `${'GET' | 'DELETE'} /api/${string}`,
    { responses, ...spec }: Spec<P, Q> & { responses: Outcomes },
    handler: (
      ctx: Context,
      input: Input<Fields<P>, Fields<Q>, undefined> & SignedIn,
    ) => Promise<unknown>,
  ) => {
    const admin = line.includes(' /api/admin/');
    const change = line.startsWith('DELETE ');
    return route(
      line,
      {
        ...spec,
        session: true,
        responses: { ...responses, ...signedOut, ...refusals(admin, change) },
      },
      async (ctx, input) => {
        if (change && isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        const found = admin
          ? await requireAdmin(ctx, signedIn)
          : await requireSignedIn(ctx, signedIn);
        ctx.body = await handler(ctx, { ...input, ...found } as never);
      },
    );
  };

/**
 * Ending one session by its id: a user's own (another's is a 404, as if it did not exist), or
 * anyone's by an administrator.
 */
export function endSession(
  signedInRoute: ReturnType<typeof signedInRoutes>,
  line: `DELETE /api/${string}/{id}`,
  doc: Spec<undefined, undefined>,
  { sessions, audit }: { sessions: SessionStore; audit: AuditTrail },
) {
  const admin = line.includes(' /api/admin/');
  return signedInRoute(
    line,
    {
      ...doc,
      params: ById,
      responses: {
        200: { description: 'Ended', schema: Ended },
        404: failure(
          'No live session of the user (of anyone, for an administrator) has this id',
          messages.sessionNotFound,
        ),
      },
    },
    async (ctx, { params, user }) => {
      const ended = await sessions.end(params.id, admin ? undefined : user.id);
      if (!ended) throw notFound(messages.sessionNotFound);
      recordEnded(audit, ctx, ended.userId, 1, admin ? user : undefined);
      return { ended: 1 };
    },
  );
}
