import * as yup from 'yup';
import { forbidden, notFound } from '../../http/errors.js';
import { text } from '../../http/fields.js';
import type { Context } from 'koa';
import { route, type Input, type JsonSchema, type Outcomes } from '../../http/route.js';
import type { Accounts } from '../accounts.js';
import {
  AUDIT_EVENT_TYPES,
  requestFacts,
  type AuditEventType,
  type AuditTrail,
} from '../auditLog.js';
import type { CredentialGenerations } from '../generations.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { requireAdmin, type SessionStore, type SignedIn, type SignedInCheck } from '../sessions.js';
import {
  AccountSessionsView,
  AccountsOverviewView,
  AccountThrottleView,
  AuditPage,
  presentThrottle,
  SettingsView,
  type AdminViews,
} from '../presenters.js';
import type { LoginLimits } from '../limits.js';
import {
  Ended,
  endedBy,
  endSessionRoute,
  notAdmin,
  notAdminOrCrossSite,
  signedOut,
} from './outcomes.js';

export interface AdminRoutesDeps {
  accounts: Accounts;
  generations: CredentialGenerations;
  sessions: SessionStore;
  limits: LoginLimits;
  audit: AuditTrail;
  signedIn: SignedInCheck;
  views: AdminViews;
}

const UserId = yup.object({ id: yup.string().required() });

/** The events of a page of the audit trail: at most this many, and so many unless asked. */
const MOST_PER_PAGE = 100;
const PER_PAGE = 50;

/** A whole number as a query writes it; anything else is not one (NaN, which yup words). */
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

const Unlocked: JsonSchema = {
  type: 'object',
  title: 'Unlocked',
  properties: {
    cleared: {
      ...AccountThrottleView,
      description: "The account's login throttling as it stood when it was cleared",
    },
  },
  required: ['cleared'],
};

/**
 * How an administrator's operation is declared: it answers only a signed-in administrator, the
 * role checked at every request, and refuses a change (anything but GET) sent from a page of
 * another site before that. The handler is given the administrator beside its input.
 */
function adminRouteFor(signedIn: SignedInCheck) {
  return <
    P extends yup.AnyObjectSchema | undefined = undefined,
    Q extends yup.AnyObjectSchema | undefined = undefined,
  >(
    line: `${'GET' | 'DELETE'} /api/admin/${string}`,
    {
      responses,
      ...spec
    }: { summary: string; description?: string; params?: P; query?: Q; responses: Outcomes },
    handler: (
      ctx: Context,
      input: Input<yup.InferType<NonNullable<P>>, yup.InferType<NonNullable<Q>>, undefined> & {
        admin: SignedIn;
      },
    ) => Promise<unknown>,
  ) => {
    const change = !line.startsWith('GET ');
    return route(
      line,
      {
        ...spec,
        session: true,
        responses: { ...responses, ...signedOut, ...(change ? notAdminOrCrossSite : notAdmin) },
      },
      async (ctx, input) => {
        if (change && isForeignOrigin(ctx)) throw forbidden(messages.foreignRequest);
        ctx.body = await handler(ctx, {
          ...input,
          admin: await requireAdmin(ctx, signedIn),
        } as never);
      },
    );
  };
}

/**
 * What administrators may do: see and end anyone's sessions, read the settings and the audit
 * trail, unlock an account. The role is checked at every request.
 */
export function adminRoutes({
  accounts,
  generations,
  sessions,
  limits,
  audit,
  signedIn,
  views,
}: AdminRoutesDeps) {
  const adminRoute = adminRouteFor(signedIn);
  return [
    adminRoute(
      'GET /api/admin/sessions',
      {
        summary: 'Every Account and Its Sessions',
        responses: {
          200: {
            description: 'The accounts with their live sessions',
            schema: AccountSessionsView,
          },
        },
      },
      async (_ctx, { admin }) => ({ users: await views.accounts(admin.sessionId) }),
    ),

    endSessionRoute(
      'DELETE /api/admin/sessions/{id}',
      {
        summary: 'End a Session',
        description:
          "Ends any account's session: its browser is signed out at its next request, on every instance.",
        by: 'admin',
      },
      { sessions, signedIn, audit },
    ),

    adminRoute(
      'DELETE /api/admin/users/{id}/sessions',
      {
        summary: 'End Every Session of an Account',
        description:
          'Ends every session of the account, on every instance, and makes the device cookies its browsers hold worthless: until they log in again, the login throttling treats them as strangers.',
        params: UserId,
        responses: {
          200: {
            description:
              "The sessions ended (the administrator's own too, when it is their account)",
            schema: Ended,
          },
          404: failure('No account has this id', messages.userNotFound),
        },
      },
      async (ctx, { params, admin }) => {
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        await generations.renew(params.id);
        const ended = await sessions.endAllOf(params.id);
        if (ended > 0)
          audit.record(
            'session.ended',
            requestFacts(ctx),
            { userId: params.id },
            endedBy('admin', admin.user, ended),
          );
        return { ended };
      },
    ),

    adminRoute(
      'GET /api/admin/users',
      {
        summary: 'Every Account with Its Sessions, Throttling and Events',
        description:
          'What the users page shows: every account with its live sessions, its login throttling as it stands, and its latest security events.',
        responses: { 200: { description: 'The accounts', schema: AccountsOverviewView } },
      },
      async (_ctx, { admin }) => ({ users: await views.overview(admin.sessionId) }),
    ),

    adminRoute(
      'DELETE /api/admin/users/{id}/throttle',
      {
        summary: 'Unlock an Account',
        description:
          "Clears the account's limit for untrusted clients (all addresses together) on every instance, so that its owner may log in from a new browser at once. Each address's own limits (its failures of this account, and of every account and unknown email) are left as they are: the addresses whose failures locked the account cannot lock it again until their own windows end.",
        params: UserId,
        responses: {
          200: { description: 'Cleared', schema: Unlocked },
          404: failure('No account has this id', messages.userNotFound),
        },
      },
      async (ctx, { params, admin }) => {
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        const cleared = presentThrottle(await limits.unlock(params.id));
        audit.record(
          'account.unlocked',
          requestFacts(ctx),
          { userId: params.id },
          { adminId: admin.user.id, wasBlocked: cleared.blocked, failures: cleared.failures },
        );
        return { cleared };
      },
    ),

    adminRoute(
      'GET /api/admin/audit',
      {
        summary: 'Audit Trail',
        description: `The security events kept, newest first, a page at a time: \`next\` is the \`before\` of the next page. \`type\` is one of ${Object.keys(
          AUDIT_EVENT_TYPES,
        )
          .map((type) => `\`${type}\``)
          .join(
            ', ',
          )}; \`email\` matches whatever its letter case; \`limit\` is 1 to ${MOST_PER_PAGE} (${PER_PAGE} when not given).`,
        query: AuditQuery,
        responses: { 200: { description: 'A page of events', schema: AuditPage } },
      },
      async (_ctx, { query }) => {
        const { limit = PER_PAGE, before, type, email } = query;
        return await audit.list({ limit, before, type, email });
      },
    ),

    adminRoute(
      'GET /api/admin/settings',
      {
        summary: 'Settings',
        description:
          'The effective settings that govern sessions, logins and the edge. No secret is among them.',
        responses: { 200: { description: 'The settings', schema: SettingsView } },
      },
      async () => views.settings,
    ),
  ];
}
