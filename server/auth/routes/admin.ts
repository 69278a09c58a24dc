import * as yup from 'yup';
import { notFound } from '../../http/errors.js';
import { text, wholeNumber } from '../../http/fields.js';
import { AUDIT_EVENT_TYPES, requestFacts, type AuditEventType } from '../auditLog.js';
import type { AuthServices } from '../index.js';
import { messages } from '../messages.js';
import { AccountsOverviewView, AuditPage, ok, SettingsView, Unlocked } from '../presenters.js';
import { ById, NO_USER } from './sessions.js';
import { signedInOf } from './signedIn.js';

const PER_PAGE = { most: 100, unless: 50 };

const AuditQuery = yup.object({
  limit: wholeNumber().min(1).max(PER_PAGE.most),
  before: wholeNumber().min(1),
  type: yup.string().oneOf(Object.keys(AUDIT_EVENT_TYPES) as AuditEventType[]),
  email: text().max(254),
});

/** What administrators may read of the accounts, the audit trail and the settings; unlocking. */
export function adminRoutes({ accounts, limits, audit, views, signedInRoute }: AuthServices) {
  return [
    signedInRoute(
      'GET /api/admin/users',
      {
        summary: 'Every Account with Its Sessions, Throttling and Events',
        responses: ok('The accounts', AccountsOverviewView),
      },
      async (ctx) => {
        ctx.body = { users: await views.overview(signedInOf(ctx).sessionId) };
      },
    ),
    signedInRoute(
      'DELETE /api/admin/users/{id}/throttle',
      {
        summary: 'Unlock an Account',
        description:
          "Clears the account's limit for untrusted clients on every instance; " +
          "each address's own limits are left as they are.",
        params: ById,
        responses: { ...ok('Cleared', Unlocked), 404: NO_USER },
      },
      async (ctx, { params: { id } }) => {
        if (!accounts.byId(id)) throw notFound(messages.userNotFound);
        const cleared = await limits.unlock(id);
        const { blocked: wasBlocked, failures } = cleared;
        const detail = { adminId: signedInOf(ctx).user.id, wasBlocked, failures };
        audit.record('account.unlocked', requestFacts(ctx), { userId: id }, detail);
        ctx.body = { cleared };
      },
    ),
    signedInRoute(
      'GET /api/admin/audit',
      {
        summary: 'Audit Trail',
        description:
          `Newest first, a page at a time; \`email\` matches whatever its letter case; ` +
          `\`limit\` is 1 to ${PER_PAGE.most} (${PER_PAGE.unless} when not given).`,
        query: AuditQuery,
        responses: ok('A page of events', AuditPage),
      },
      async (ctx, { query: { limit = PER_PAGE.unless, ...query } }) => {
        ctx.body = await audit.list({ limit, ...query });
      },
    ),
    signedInRoute(
      'GET /api/admin/settings',
      { summary: 'Settings', responses: ok('The settings', SettingsView) },
      (ctx) => {
        ctx.body = views.settings;
      },
    ),
  ];
}
