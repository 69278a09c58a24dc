import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../harness/http.js';
import type { StartedService } from '../harness/service.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import { loadConfig } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { signIn, useAuthService } from './support/authClient.js';
import { startTestService } from './support/services.js';

// Every answer names its request, and the request line says the same name: a client's report, a
// proxy's log and the service's log can be tied together.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const auth = useAuthService();
const notes: Record<string, StartedService<NotesDeps>> = {};

beforeAll(async () => {
  for (const descriptor of [notes8080, notes8000])
    notes[descriptor.name] = await startTestService(descriptor, {
      deps: { config: loadConfig({}).notes },
    });
});
afterAll(async () => {
  for (const service of Object.values(notes)) await service.close();
});

/** The request line the service wrote for the answer with this id. */
const lineOf = (service: { logs: StartedService<NotesDeps>['logs'] }, reply: Reply) =>
  service.logs.lines.find((line) => line.reqId === reply.headers['x-request-id']);

describe.each(['notes8080', 'notes8000'])('%s request ids', (name) => {
  it('gives each answer a new id when the client sent none, logging the line with it', async () => {
    const service = notes[name]!;
    const replies = [
      await service.request('GET', '/notes'),
      await service.request('GET', '/notes/999999'),
      await service.request('DELETE', '/notes'),
    ];
    const ids = replies.map((reply) => String(reply.headers['x-request-id']));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    for (const reply of replies) {
      expect(lineOf(service, reply)).toMatchObject({
        status: reply.status,
        method: expect.any(String),
        address: '127.0.0.1',
      });
    }
  });

  it(
    'keeps the id a client or a proxy sent, and replaces ' +
      'one that is not 1-128 visible ASCII characters',
    async () => {
      const service = notes[name]!;
      const kept = 'proxy-7f3a:01/ABC~';
      const echoed = await service.request('GET', '/notes', { headers: { 'x-request-id': kept } });
      expect(echoed.headers['x-request-id']).toBe(kept);
      expect(lineOf(service, echoed)?.reqId).toBe(kept);
      for (const bad of ['x'.repeat(129), 'two words', '', 'tab\there']) {
        const replaced = await service.request('GET', '/notes', {
          headers: { 'x-request-id': bad },
        });
        expect(replaced.headers['x-request-id'], JSON.stringify(bad)).toMatch(UUID);
      }
      const longest = 'y'.repeat(128);
      expect(
        (await service.request('GET', '/notes', { headers: { 'x-request-id': longest } })).headers[
          'x-request-id'
        ],
      ).toBe(longest);
    },
  );
});

describe('auth request ids', () => {
  it('names the signed-in user in the request line, and the pages carry the id too', async () => {
    const service = await auth.start();
    const token = await signIn(service);
    const me = await service.request('GET', '/api/me', {
      headers: { cookie: `token=${token}`, 'x-request-id': 'me-1' },
    });
    expect(me.headers['x-request-id']).toBe('me-1');
    expect(service.logs.lines.find((line) => line.reqId === 'me-1')).toMatchObject({
      path: '/api/me',
      status: 200,
      userId: '1',
    });
    const anonymous = await service.request('GET', '/api/me', {
      headers: { 'x-request-id': 'me-2' },
    });
    expect(anonymous.status).toBe(401);
    expect(service.logs.lines.find((line) => line.reqId === 'me-2')).not.toHaveProperty('userId');
    const page = await service.page('/login', { 'x-request-id': 'page-1' });
    expect(page.headers['x-request-id']).toBe('page-1');
  });
});
