import { describe, expect, it } from 'vitest';
import type { Reply } from '../harness/http.js';
import { signIn, useAuthService } from './support/authClient.js';
import { NOTES_SERVICES, useNotesService } from './support/notesServices.js';

// Every answer names its request, and the request line says the same name: a client's report, a
// proxy's log and the service's log can be tied together.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const auth = useAuthService();

describe.each(NOTES_SERVICES)('$name request ids', ({ descriptor }) => {
  const { service, call } = useNotesService(descriptor);
  /** The request line the service wrote for the answer with this id. */
  const lineOf = (reply: Reply) =>
    service().logs.lines.find((line) => line.reqId === reply.headers['x-request-id']);
  const withId = (id: string) => call('GET', '/notes', { headers: { 'x-request-id': id } });

  it('gives each answer a new id when the client sent none, logging the line with it', async () => {
    const replies = [
      await call('GET', '/notes'),
      await call('GET', '/notes/999999'),
      await call('DELETE', '/notes'),
    ];
    const ids = replies.map((reply) => String(reply.headers['x-request-id']));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    const method = expect.any(String);
    for (const reply of replies)
      expect(lineOf(reply)).toMatchObject({ status: reply.status, method, address: '127.0.0.1' });
  });

  it('keeps a client’s or proxy’s id; replaces one not 1-128 visible ASCII chars', async () => {
    const echoed = await withId('proxy-7f3a:01/ABC~');
    expect(echoed.headers['x-request-id']).toBe('proxy-7f3a:01/ABC~');
    expect(lineOf(echoed)?.reqId).toBe('proxy-7f3a:01/ABC~');
    for (const bad of ['x'.repeat(129), 'two words', '', 'tab\there'])
      expect((await withId(bad)).headers['x-request-id'], JSON.stringify(bad)).toMatch(UUID);
    expect((await withId('y'.repeat(128))).headers['x-request-id']).toBe('y'.repeat(128));
  });
});

describe('auth request ids', () => {
  it('names the signed-in user in the request line, and the pages carry the id too', async () => {
    const service = await auth.start();
    const token = await signIn(service);
    const line = (id: string) => service.logs.lines.find((entry) => entry.reqId === id);
    const me = await service.as(token, 'GET', '/api/me', { 'x-request-id': 'me-1' });
    expect(me.headers['x-request-id']).toBe('me-1');
    expect(line('me-1')).toMatchObject({ path: '/api/me', status: 200, userId: '1' });
    const anonymous = await service.as(undefined, 'GET', '/api/me', { 'x-request-id': 'me-2' });
    expect(anonymous.status).toBe(401);
    expect(line('me-2')).not.toHaveProperty('userId');
    const page = await service.page('/login', { 'x-request-id': 'page-1' });
    expect(page.headers['x-request-id']).toBe('page-1');
  });
});
