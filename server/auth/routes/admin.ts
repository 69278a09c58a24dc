import * as yup from 'yup';
import { forbidden, notFound } from '../../shared/errors.js';
import { json } from '../../shared/answer.js';
import { route } from '../../shared/route.js';
import type { Accounts } from '../accounts.js';
import type { CredentialGenerations } from '../generations.js';
import { failure, messages } from '../messages.js';
import { isForeignOrigin } from '../origin.js';
import { requireAdmin, type SessionStore, type SignedInCheck } from '../sessions.js';
import { AccountSessionsView, SettingsView, type AdminViews } from '../presenters.js';
import { Ended, endSessionRoute, notAdmin, notAdminOrCrossSite, signedOut } from './outcomes.js';

export interface AdminRoutesDeps {
  accounts: Accounts;
  generations: CredentialGenerations;
  sessions: SessionStore;
  signedIn: SignedInCheck;
  views: AdminViews;
}

const UserId = yup.object({ id: yup.string().required() });

/** What administrators may do: see and end anyone's sessions, read the settings. The role is checked at every request. */
export function adminRoutes({ accounts, generations, sessions, signedIn, views }: AdminRoutesDeps) {
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
      { sessions, signedIn },
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
        await requireAdmin(ctx, signedIn);
        if (!accounts.byId(params.id)) throw notFound(messages.userNotFound);
        await generations.renew(params.id);
        return json(200, { ended: await sessions.endAllOf(params.id) });
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
