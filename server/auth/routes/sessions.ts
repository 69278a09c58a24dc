import type { Context } from 'koa';
import * as yup from 'yup';
import { notFound } from '../../http/errors.js';
import type { User } from '../accounts.js';
import { requestFacts } from '../auditLog.js';
import type { AuthServices } from '../index.js';
import { failure, messages } from '../messages.js';
import { AccountSessionsView, object, ok, presentSession, SessionList } from '../presenters.js';
import { signedInOf } from './signedIn.js';

export const ById = yup.object({ id: yup.string().required() });
export const NO_USER = failure('No account has this id', messages.userNotFound);

const Ended = object('Ended', {
  ended: { type: 'integer', minimum: 0, description: 'Sessions ended' },
});
const MySessions = object('MySessions', { sessions: SessionList });
const NO_SESSION = failure(
  'No live session of the user (of anyone, for an administrator) has this id',
  messages.sessionNotFound,
);

/** The sessions users may see and end: their own, and an administrator anyone's. */
export function sessionListRoutes(services: AuthServices) {
  const { accounts, sessions, audit, views, signedInRoute } = services;
  // Filed under their account as ended by their owner or by `admin`.
  const recordEnded = (ctx: Context, userId: string, ended: number, admin?: User) => {
    const by: Record<string, string> = admin ? { by: 'admin', adminId: admin.id } : { by: 'owner' };
    if (ended > 0) audit.record('session.ended', requestFacts(ctx), { userId }, { ...by, ended });
  };
  // Another user's session is not found, as if it did not exist; an administrator ends anyone's.
  const endOne = (line: `DELETE /api/${string}/{id}`, summary: string, description?: string) =>
    signedInRoute(
      line,
      { summary, description, params: ById, responses: { ...ok('Ended', Ended), 404: NO_SESSION } },
      async (ctx, { params }) => {
        const { user } = signedInOf(ctx);
        const admin = line.includes('/admin/') ? user : undefined;
        const ended = await sessions.end(params.id, admin ? undefined : user.id);
        if (!ended) throw notFound(messages.sessionNotFound);
        recordEnded(ctx, ended.userId, 1, admin);
        ctx.body = { ended: 1 };
      },
    );

  return [
    signedInRoute(
      'GET /api/sessions',
      { summary: 'My Sessions', responses: ok('Live sessions, oldest first', MySessions) },
      async (ctx) => {
        const { user, sessionId } = signedInOf(ctx);
        const live = await sessions.list(user.id);
        ctx.body = { sessions: live.map((session) => presentSession(session, sessionId)) };
      },
    ),
    signedInRoute(
      'DELETE /api/sessions',
      { summary: 'End My Other Sessions', responses: ok('The other sessions ended', Ended) },
      async (ctx) => {
        const { user, sessionId } = signedInOf(ctx);
        const ended = await sessions.endAllOf(user.id, sessionId);
        recordEnded(ctx, user.id, ended);
        ctx.body = { ended };
      },
    ),
    endOne(
      'DELETE /api/sessions/{id}',
      'End My Session',
      "Ending this request's own session is logging out, without deleting the cookie.",
    ),
    signedInRoute(
      'GET /api/admin/sessions',
      {
        summary: 'Every Account and Its Sessions',
        responses: ok('The accounts', AccountSessionsView),
      },
      async (ctx) => {
        ctx.body = { users: await views.accounts(signedInOf(ctx).sessionId) };
      },
    ),
    endOne('DELETE /api/admin/sessions/{id}', 'End a Session'),
    signedInRoute(
      'DELETE /api/admin/users/{id}/sessions',
      {
        summary: 'End Every Session of an Account',
        description:
          'Ends every session of the account, on every instance, and makes the device cookies ' +
          'its browsers hold worthless until they log in again.',
        params: ById,
        responses: {
          ...ok("The sessions ended (the administrator's own too)", Ended),
          404: NO_USER,
        },
      },
      async (ctx, { params: { id } }) => {
        if (!accounts.byId(id)) throw notFound(messages.userNotFound);
        await sessions.renew(id);
        const ended = await sessions.endAllOf(id);
        recordEnded(ctx, id, ended, signedInOf(ctx).user);
        ctx.body = { ended };
      },
    ),
  ];
}
