import type { JsonSchema } from '../shared/route.js';
import type { SessionInfo } from './sessions.js';

/** A session as its owner and administrators see it: when, from where, with what; never its token. */
export const SessionView: JsonSchema = {
  type: 'object',
  title: 'Session',
  properties: {
    id: { type: 'string', format: 'uuid' },
    createdAt: { type: 'string', format: 'date-time' },
    lastSeenAt: { type: 'string', format: 'date-time', description: 'Updated at most once a minute' },
    expiresAt: { type: 'string', format: 'date-time' },
    address: { type: 'string', description: 'The client address it was opened from', examples: ['203.0.113.7'] },
    userAgent: { type: 'string', description: 'The browser it was opened with (at most 256 characters)' },
    current: { type: 'boolean', description: 'Whether it is the session of this request' },
  },
  required: ['id', 'createdAt', 'lastSeenAt', 'expiresAt', 'address', 'userAgent', 'current'],
};

export function presentSession({ id, createdAt, lastSeenAt, expiresAt, address, userAgent }: SessionInfo, currentId: string) {
  return { id, createdAt, lastSeenAt, expiresAt, address, userAgent, current: id === currentId };
}

export const sessionList = (description: string): JsonSchema => ({ type: 'array', description, items: SessionView });
