import { expect } from 'vitest';
import type { LogLine } from '../../harness/logs.js';
import type { AuditEvent } from '../../server/auth/auditLog.js';
import type { AuthClient } from './authClient.js';

/** The fields every event has, each of its type (`email` and `userId` may be null). */
export function expectEventFields(event: AuditEvent): void {
  const shown = JSON.stringify(event);
  const fields = 'address detail email id requestId time type userAgent userId';
  expect(Object.keys(event).sort().join(' '), shown).toBe(fields);
  expect(event, shown).toMatchObject({
    id: expect.any(Number),
    type: expect.any(String),
    address: expect.any(String),
    userAgent: expect.any(String),
    requestId: expect.any(String),
    detail: expect.any(Object),
  });
  expect(new Date(event.time).toISOString(), shown).toBe(event.time);
  for (const field of [event.email, event.userId])
    expect(field === null || typeof field === 'string', shown).toBe(true);
}

/** A page of the audit trail as an administrator reads it, every event with every field. */
export async function auditPage(service: AuthClient, admin: string, query = '') {
  const reply = await service.as(admin, 'GET', `/api/admin/audit${query}`);
  expect(reply.status, reply.text).toBe(200);
  const page = reply.json as { events: AuditEvent[]; next: number | null };
  page.events.forEach(expectEventFields);
  return page;
}

/** Every event kept, newest first, a page of 100 at a time. */
export async function allEvents(service: AuthClient, admin: string, filter = '') {
  const events: AuditEvent[] = [];
  for (let query = `?limit=100${filter}`; query;) {
    const page = await auditPage(service, admin, query);
    events.push(...page.events);
    query = page.next === null ? '' : `?limit=100&before=${page.next}${filter}`;
  }
  return events;
}

/** A login as a browser sends it, from `address`, with a request id of the test's choosing. */
export const attempt = (
  service: AuthClient,
  credentials: { email: string; password: string },
  requestId: string,
  address = '127.0.0.1',
  userAgent = 'Audit/1.0',
) =>
  service.request('POST', '/api/login', {
    json: credentials,
    headers: { 'user-agent': userAgent, 'x-request-id': requestId },
    localAddress: address,
  });

export const eventLines = (service: AuthClient): LogLine[] =>
  service.logs.lines.filter((line) => typeof line.event === 'string');
