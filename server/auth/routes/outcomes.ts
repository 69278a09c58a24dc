import * as yup from 'yup';
import type { JsonSchema } from '../../shared/route.js';
import { failure, messages } from '../messages.js';

/** What the session routes have in common: a session id in the path, their failures, the count of sessions ended. */

export const SessionId = yup.object({ id: yup.string().required() });

export const Ended: JsonSchema = {
  type: 'object',
  title: 'Ended',
  properties: { ended: { type: 'integer', minimum: 0, description: 'How many sessions were ended' } },
  required: ['ended'],
};

export const signedOut = {
  401: failure('No `token` cookie (`unauthenticated`), or one that names no live session (`invalid session`)', messages.unauthenticated),
};

export const crossSite = { 403: failure('Sent from a page of another site (Origin header)', messages.foreignRequest) };

export const notAdmin = { 403: failure('The signed-in user is not an administrator (checked at every request)', messages.forbidden) };

export const notAdminOrCrossSite = {
  403: failure(
    `The signed-in user is not an administrator (checked at every request), or the request was sent from a page of another site (Origin header; then the error is \`${messages.foreignRequest}\`)`,
    messages.forbidden,
  ),
};
