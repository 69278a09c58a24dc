import * as yup from 'yup';
import { parsedBy } from '../../shared/compiledCheck.js';
import { forbidden, notFound } from '../../shared/errors.js';
import { json } from '../../shared/answer.js';
import { route, type JsonSchema } from '../../shared/route.js';
import type { Accounts } from '../accounts.js';
import { AUDIT_EVENT_TYPES, requestFacts, type AuditEventType, type AuditTrail } from '../auditLog.js';
import type { CredentialGenerations } from '../generations.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { requireAdmin, type SessionStore, type SignedInCheck } from '../sessions.js';
import { AccountSessionsView, AccountsOverviewView, AccountThrottleView, AuditPage, presentThrottle, SettingsView, type AdminViews } from '../presenters.js';
import type { LoginThrottle } from '../throttle.js';
import { Ended, endedBy, endSessionRoute, notAdmin, notAdminOrCrossSite, signedOut } from './outcomes.js';

export interface AdminRoutesDeps {
  accounts: Accounts;
  generations: CredentialGenerations;
  sessions: SessionStore;
  throttle: LoginThrottle;
  audit: AuditTrail;
  signedIn: SignedInCheck;
  views: AdminViews;
}

const UserId = yup.object({ id: yup.string().required() });

/** The events of a page of the audit trail: at most this many, and so many unless asked. */
const MOST_PER_PAGE = 100;
const PER_PAGE = 50;

/** A whole number as a query writes it; anything else is not one (NaN, which yup words). */
const wholeNumber = () => parsedBy(yup.number().typeError('${path} must be a whole number'), (raw) => (/^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN)).integer();

const AuditQuery = yup.object({
  limit: wholeNumber().min(1).max(MOST_PER_PAGE),
  before: wholeNumber().min(1),
  type: yup.string().oneOf(Object.keys(AUDIT_EVENT_TYPES) as AuditEventType[]),
  email: yup.string().max(254),
});

const Unlocked: JsonSchema = {
  type: 'object',
  title: 'Unlocked',
  properties: { cleared: { ...AccountThrottleView, description: "The account's login throttling as it stood when it was cleared" } },
  required: ['cleared'],
};

/**
 * What administrators may do: see and end anyone's sessions, read the settings and the audit
 * trail, unlock an account. The role is checked at every request.
 */
export function adminRoutes({ accounts, generations, sessions, throttle, audit, signedIn, views }: AdminRoutesDeps) {
  return [
    route(
      'GET /api/admin/sessions',
      {
        summary: 'Every Account and Its Sessions',
        session: true,
        responses: { 200: { description: 'The accounts with their live sessions', schema: AccountSessionsView }, ...signedOut, ...notAdmin },
      },
      async (ctx) => {
        const { sessionId } = await requireAdmin(ctx, signedIn);
        return json(200, { users: await views.accounts(sessionId) });
      },
    ),

    endSessionRoute(
      'DELETE /api/admin/sessions/{id}',
      {
        summary: 'End a Session',
        description: "Ends any account's session: its browser is signed out at its next request, on every instance.",
        by: 'admin',
      },
      { sessions, signedIn, audit },
    ),

    route(
      'DELETE /api/admin/users/{id}/sessions',
      {
        summary: 'End Every Session of an Account',
        description:
          "Ends every session of the account, on every instance, and makes the device cookies its browsers hold worthless: until they log in again, the login throttling treats them as strangers.",
        session: true,
        params: UserId,
        responses: {
          200: { description: 'The sessions ended (the administrator\'s own too, when it is their account)', schema: Ended },
          404: failure('No account has this id', messages.userNotFound),
          ...signedOut,
          ...notAdminOrCrossSite,
        },
      },
      async (ctx, { params }) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        const { user } = await requireAdmin(ctx, signedIn);
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        await generations.renew(params.id);
        const ended = await sessions.endAllOf(params.id);
        if (ended > 0) audit.record('session.ended', requestFacts(ctx), { userId: params.id }, endedBy('admin', user, ended));
        return json(200, { ended });
      },
    ),

    route(
      'GET /api/admin/users',
      {
        summary: 'Every Account with Its Sessions, Throttling and Events',
        description: 'What the users page shows: every account with its live sessions, its login throttling as it stands, and its latest security events.',
        session: true,
        responses: { 200: { description: 'The accounts', schema: AccountsOverviewView }, ...signedOut, ...notAdmin },
      },
      async (ctx) => {
        const { sessionId } = await requireAdmin(ctx, signedIn);
        return json(200, { users: await views.overview(sessionId) });
      },
    ),

    route(
      'DELETE /api/admin/users/{id}/throttle',
      {
        summary: 'Unlock an Account',
        description:
          "Clears every count of the account's login throttling, on every instance: its failures from each client address and trusted device (the pair limits) and from untrusted clients all together (the account limit), so that every client may try it again at once. Each address's own budget (its failures over every account and unknown email) is left as it is: it belongs to the address, not to the account.",
        session: true,
        params: UserId,
        responses: {
          200: { description: 'Cleared', schema: Unlocked },
          404: failure('No account has this id', messages.userNotFound),
          ...signedOut,
          ...notAdminOrCrossSite,
        },
      },
      async (ctx, { params }) => {
        if (isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        const { user } = await requireAdmin(ctx, signedIn);
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        const cleared = presentThrottle(await throttle.clear(params.id));
        audit.record('account.unlocked', requestFacts(ctx), { userId: params.id }, {
          adminId: user.id,
          wasBlocked: cleared.blocked,
          clients: cleared.clients.length,
          accountFailures: cleared.account.failures,
        });
        return json(200, { cleared });
      },
    ),

    route(
      'GET /api/admin/audit',
      {
        summary: 'Audit Trail',
        description: `The security events kept, newest first, a page at a time: \`next\` is the \`before\` of the next page. \`type\` is one of ${Object.keys(AUDIT_EVENT_TYPES)
          .map((type) => `\`${type}\``)
          .join(', ')}; \`email\` matches whatever its letter case; \`limit\` is 1 to ${MOST_PER_PAGE} (${PER_PAGE} when not given).`,
        session: true,
        query: AuditQuery,
        responses: { 200: { description: 'A page of events', schema: AuditPage }, ...signedOut, ...notAdmin },
      },
      async (ctx, { query }) => {
        await requireAdmin(ctx, signedIn);
        const { limit = PER_PAGE, before, type, email } = query;
        return json(200, await audit.list({ limit, before, type, email }));
      },
    ),

    route(
      'GET /api/admin/settings',
      {
        summary: 'Settings',
        description: 'The effective settings that govern sessions, logins and the edge. No secret is among them.',
        session: true,
        responses: { 200: { description: 'The settings', schema: SettingsView }, ...signedOut, ...notAdmin },
      },
      async (ctx) => {
        await requireAdmin(ctx, signedIn);
        return json(200, views.settings);
      },
    ),
  ];
}
