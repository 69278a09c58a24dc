import * as yup from 'yup';
import { notFound } from '../../http/errors.js';
import { text } from '../../http/fields.js';
import { AUDIT_EVENT_TYPES, requestFacts, type AuditEventType } from '../auditLog.js';
import type { AuthServices } from '../index.js';
import { failure, messages } from '../messages.js';
import {
  AccountSessionsView,
  AccountsOverviewView,
  AccountThrottleView,
  AuditPage,
  object,
  presentThrottle,
  SettingsView,
} from '../presenters.js';
import { ById, Ended, endSession, recordEnded, signedInRoutes } from './signedIn.js';

const MOST_PER_PAGE = 100;
const PER_PAGE = 50;

/** A whole number as a query writes it; anything else is NaN, which yup words. */
const wholeNumber = () =>
  yup
    .number()
    .typeError('${path} must be a whole number')
    .transform((_value, raw) =>
      typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN,
    )
    .integer();

const AuditQuery = yup.object({
  limit: wholeNumber().min(1).max(MOST_PER_PAGE),
  before: wholeNumber().min(1),
  type: yup.string().oneOf(Object.keys(AUDIT_EVENT_TYPES) as AuditEventType[]),
  email: text().max(254),
});

const Unlocked = object('Unlocked', {
  cleared: { ...AccountThrottleView, description: 'As it stood when it was cleared' },
});

const noUser = { 404: failure('No account has this id', messages.userNotFound) };

/** What administrators may do: end anyone's sessions, read the settings and audit trail, unlock. */
export function adminRoutes(deps: AuthServices) {
  const { accounts, generations, sessions, limits, audit, views } = deps;
  const signedInRoute = signedInRoutes(deps.signedIn);
  return [
    signedInRoute(
      'GET /api/admin/sessions',
      {
        summary: 'Every Account and Its Sessions',
        responses: { 200: { description: 'The accounts', schema: AccountSessionsView } },
      },
      async (_ctx, { sessionId }) => ({ users: await views.accounts(sessionId) }),
    ),

    endSession(
      signedInRoute,
      'DELETE /api/admin/sessions/{id}',
      {
        summary: 'End a Session',
      },
      deps,
    ),

    signedInRoute(
      'DELETE /api/admin/users/{id}/sessions',
      {
        summary: 'End Every Session of an Account',
        description:
          'Ends every session of the account, on every instance, ' +
          'and makes the device cookies its browsers hold worthless until they log in again.',
        params: ById,
        responses: {
          200: { description: "The sessions ended (the administrator's own too)", schema: Ended },
          ...noUser,
        },
      },
      async (ctx, { params, user }) => {
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        await generations.renew(params.id);
        const ended = await sessions.endAllOf(params.id);
        recordEnded(audit, ctx, params.id, ended, user);
        return { ended };
      },
    ),

    signedInRoute(
      'GET /api/admin/users',
      {
        summary: 'Every Account with Its Sessions, Throttling and Events',
        responses: { 200: { description: 'The accounts', schema: AccountsOverviewView } },
      },
      async (_ctx, { sessionId }) => ({ users: await views.overview(sessionId) }),
    ),

    signedInRoute(
      'DELETE /api/admin/users/{id}/throttle',
      {
        summary: 'Unlock an Account',
        description:
          "Clears the account's limit for untrusted clients on every instance; " +
          "each address's own limits are left as they are.",
        params: ById,
        responses: { 200: { description: 'Cleared', schema: Unlocked }, ...noUser },
      },
      async (ctx, { params, user }) => {
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        const cleared = presentThrottle(await limits.unlock(params.id));
        audit.record(
          'account.unlocked',
          requestFacts(ctx),
          { userId: params.id },
          { adminId: user.id, wasBlocked: cleared.blocked, failures: cleared.failures },
        );
        return { cleared };
      },
    ),

    signedInRoute(
      'GET /api/admin/audit',
      {
        summary: 'Audit Trail',
        description:
          `Newest first, a page at a time. ` +
          `\`type\` is one of ${Object.keys(AUDIT_EVENT_TYPES).join(', ')}; ` +
          `\`email\` matches whatever its letter case; ` +
          `\`limit\` is 1 to ${MOST_PER_PAGE} (${PER_PAGE} when not given).`,
        query: AuditQuery,
        responses: { 200: { description: 'A page of events', schema: AuditPage } },
      },
      async (_ctx, { query: { limit = PER_PAGE, before, type, email } }) =>
        audit.list({ limit, before, type, email }),
    ),

    signedInRoute(
      'GET /api/admin/settings',
      {
        summary: 'Settings',
        responses: { 200: { description: 'The settings', schema: SettingsView } },
      },
      async () => views.settings,
    ),
  ];
}
