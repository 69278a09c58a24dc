import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../harness/http.js';
import { startReverseProxy } from '../harness/reverseProxy.js';
import { startService } from '../harness/service.js';
import { builtSpa, ensureSpaBuilt } from '../server/auth/spa.js';
import { loadConfig, type Edge } from '../server/config.js';
import { auth, notes8000, notes8080 } from '../server/services.js';
import { statusAndBody } from './support/notesServices.js';
import { jsonInvalid } from './support/pydanticErrors.js';
import { startTestService } from './support/services.js';

// The edge of every service: which hosts it answers, whom it believes about the client, the
// headers on every answer, what it logs, how it reads text, what it serves as files.

const USER = { email: 'user@example.com', password: 'user-password' };
const defaults = loadConfig({});
const notes = (descriptor: typeof notes8080, edge: Edge) =>
  startTestService(descriptor, { deps: { config: defaults.notes }, edge });
async function login(env: Record<string, string> = {}) {
  const config = loadConfig({ PASSWORD_HASH_COST: '1024', ...env });
  const spa = await builtSpa();
  return startService(auth, { deps: { config: config.auth, spa }, edge: config.edge.auth });
}
const closed = loadConfig({ NOTES8080_ALLOWED_HOSTS: 'notes.example, notes.example:8443' }).edge;

/** The services of this file, as the process configures each by default, or as named. */
const starting = () => ({
  notes8000: notes(notes8000, defaults.edge.notes8000),
  notes8000InProduction: notes(notes8000, { ...defaults.edge.notes8000, production: true }),
  notes8080: notes(notes8080, defaults.edge.notes8080),
  notes8080Closed: notes(notes8080, { ...closed.notes8080, production: true }),
  login: login(),
  loginClosed: login({ AUTH_ALLOWED_HOSTS: 'app.example' }),
  loginBehindProxy: login({ TRUST_PROXY: '1' }),
});
type Starting = ReturnType<typeof starting>;
const s = {} as { [Name in keyof Starting]: Awaited<Starting[Name]> };
beforeAll(async () => {
  await ensureSpaBuilt();
  const all = Object.entries(starting()).map(async ([name, started]) => [name, await started]);
  Object.assign(s, Object.fromEntries(await Promise.all(all)));
});
afterAll(() => Promise.all(Object.values(s).map((service) => service.close())));

type Service = (typeof s)[keyof Starting];
const get = (service: Service, path: string, host?: string) =>
  send(service.url, { method: 'GET', path, headers: host ? { host } : {} });
/** GET /notes with this Host header, the answer checked against the service's document. */
const notesFor = (service: Service, host: string) =>
  service.request('GET', '/notes', { headers: { host } });
const invalidHost = (field: string) => [400, { [field]: 'Invalid Host header' }];

describe('the Host allowlist', () => {
  test("notes8000, bound to loopback, answers only this machine's names by default", async () => {
    const port = new URL(s.notes8000.url).port;
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST'])
      for (const named of [host, `${host}:${port}`])
        expect((await notesFor(s.notes8000, named)).status, named).toBe(200);
  });

  test('notes8000 refuses a page of another site aimed at 127.0.0.1 (DNS rebinding)', async () => {
    const service = s.notes8000;
    const json = { title: 'kept', content: 'x' };
    const kept = await service.request('POST', '/notes', { json, headers: { host: '127.0.0.1' } });
    const { id } = kept.json as { id: number };
    const host = `rebind.attacker.example:${new URL(service.url).port}`;
    // Reads and writes alike.
    for (const [method, path, json] of [
      ['GET', '/notes', undefined],
      ['POST', '/notes', { title: 'planted', content: 'x' }],
      ['DELETE', `/notes/${id}`, undefined],
      ['GET', '/docs', undefined],
    ] as const) {
      const answer = await send(service.url, { method, path, json, headers: { host } });
      expect(statusAndBody(answer), `${method} ${path}`).toEqual(invalidHost('detail'));
    }
    const stored = "SELECT id, title FROM notes WHERE id = $1 OR title = 'planted'";
    expect((await service.db.query(stored, [id])).rows).toEqual([{ id, title: 'kept' }]);
  });

  test('notes8080 and the login service answer any host unless configured to refuse', async () => {
    expect((await notesFor(s.notes8080, 'anything.example')).status).toBe(200);
    for (const host of ['notes.example', 'notes.example:8443'])
      expect((await notesFor(s.notes8080Closed, host)).status, host).toBe(200);
    // Configured, they refuse others in their own shape.
    const refused = await notesFor(s.notes8080Closed, 'other.example');
    expect(statusAndBody(refused)).toEqual(invalidHost('error'));
    const other = { headers: { host: 'other.example' } };
    const refusal = await s.loginClosed.request('POST', '/api/login', { json: USER, ...other });
    expect(statusAndBody(refusal)).toEqual(invalidHost('error'));
  });
});

describe('security headers on every answer of every service', () => {
  test('notes answers, errors and unmatched requests included; HSTS in production', async () => {
    const paths = '/notes /notes/999999 /nowhere /openapi.json /docs /docs/swagger-ui.css';
    for (const [service, host] of [
      [s.notes8080Closed, 'notes.example'],
      [s.notes8000InProduction, '127.0.0.1'],
    ] as const)
      for (const path of paths.split(' '))
        expect((await get(service, path, host)).headers, path).toMatchObject({
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'DENY',
          'referrer-policy': 'no-referrer',
          'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
          'strict-transport-security': expect.stringMatching(/max-age=31536000/),
        });
    for (const development of [s.notes8080, s.notes8000])
      expect((await get(development, '/notes')).headers).not.toHaveProperty(
        'strict-transport-security',
      );
  });

  test('/docs: a policy Swagger UI works under (its own files only), and no framing', async () => {
    const { headers } = await get(s.notes8000, '/docs');
    const csp = String(headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(headers['x-frame-options']).toBe('DENY');
  });
});

describe('clients behind a reverse proxy (TRUST_PROXY)', () => {
  const through = (url: string, from: string, password: string, forwardedFor?: string) =>
    send(url, {
      method: 'POST',
      path: '/api/login',
      json: { email: USER.email, password },
      localAddress: from,
      headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    });

  test('a client failing logins through the proxy blocks itself, not others behind', async () => {
    const proxy = await startReverseProxy(s.loginBehindProxy.url);
    try {
      // The attacker also claims to be someone else: the leftmost X-Forwarded-For is its own word.
      for (let attempt = 0; attempt < 5; attempt++)
        expect((await through(proxy.url, '127.0.0.2', 'wrong', '127.0.0.3')).status).toBe(401);
      expect((await through(proxy.url, '127.0.0.2', USER.password)).status).toBe(429);
      expect((await through(proxy.url, '127.0.0.3', USER.password)).status).toBe(200);
      expect((await through(proxy.url, '127.0.0.4', USER.password)).status).toBe(200);
    } finally {
      await proxy.stop();
    }
  });

  test('without TRUST_PROXY, forwarding headers are ignored: clients pick no address', async () => {
    const attempt = (forwardedFor: string, password: string) =>
      s.login.request('POST', '/api/login', {
        json: { email: USER.email, password },
        headers: { 'x-forwarded-for': forwardedFor },
      });
    for (let count = 0; count < 5; count++)
      expect((await attempt(`10.0.0.${count}`, 'wrong')).status).toBe(401);
    expect((await attempt('10.0.0.99', USER.password)).status).toBe(429);
  });

  test('a proxy named by address is believed; a client naming itself a proxy is not', () => {
    const config = loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' });
    expect(config.edge.auth.trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(() => loadConfig({ TRUST_PROXY: 'not-an-address' })).toThrow(
      'TRUST_PROXY="not-an-address" is not valid: expected a ' +
        'number of hops, or addresses and subnets separated by commas',
    );
  });
});

describe('text in, text stored', () => {
  test.each([
    ['notes8080', 'error', 400, 'Request body is not valid JSON: Invalid UTF-8 (at character 13)'],
    ['notes8000', 'detail', 422, [jsonInvalid(13, 'Invalid UTF-8')]],
  ] as const)(
    '%s: invalid UTF-8 is malformed, another charset declared is 415; neither stores anything',
    async (name, key, status, malformed) => {
      const service = s[name];
      const count = 'SELECT count(*)::int AS n FROM notes';
      const before = (await service.db.query(count)).rows;
      const latin1 = (contentType: string) =>
        service.request('POST', '/notes', {
          body: Buffer.from('{"title":"café","body":"x","content":"x"}', 'latin1'),
          headers: { 'content-type': contentType },
        });
      const answer = statusAndBody(await latin1('application/json'));
      expect(answer).toEqual([status, { [key]: malformed }]);
      const declared = await latin1('application/json; charset=iso-8859-1');
      const utf8Only = { [key]: 'Unsupported charset "iso-8859-1": JSON is UTF-8' };
      expect(statusAndBody(declared)).toEqual([415, utf8Only]);
      expect((await service.db.query(count)).rows).toEqual(before);
    },
  );

  test('UTF-8 declared in any spelling is read as it was sent', async () => {
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      const answer = await s.notes8080.request('POST', '/notes', {
        body: Buffer.from(JSON.stringify({ title: 'café ☕' }), 'utf8'),
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect((answer.json as { title: string }).title).toBe('café ☕');
    }
  });
});

test.each(['/assets/../index.html', '/assets/%2e%2e/index.html', '/assets/..%2findex.html'])(
  'the login service answers %s with 404, not the page shell',
  async (path) => {
    const answer = await get(s.login, path);
    expect(answer.status).toBe(404);
    expect(answer.text).not.toContain('<div id="root">');
    expect(answer.headers['cache-control'] ?? '').not.toContain('immutable');
  },
);

test('logs hold neither a session cookie nor the raw request of a malformed body', async () => {
  const secret = 'c0ffee00-dead-beef-0000-5ecre7000000';
  const headers = { 'content-type': 'application/json', cookie: `token=${secret}` };
  for (const [service, path] of [
    [s.notes8080, '/notes'],
    [s.notes8000, '/notes'],
    [s.login, '/api/login'],
  ] as const) {
    await rawRequest(
      Number(new URL(service.url).port),
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: token=${secret}\r\n` +
        `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `zz\r\n{"title":"x"}\r\n0\r\n\r\n`,
    );
    await send(service.url, { method: 'POST', path, body: '{"title":', headers });
    expect(JSON.stringify(service.logs.lines), service.url).not.toContain(secret);
  }
});

/** Sends `text` as it is on a connection of its own, and waits for its end (2 s at most). */
function rawRequest(port: number, text: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.resume().on('error', () => resolve());
    socket.on('close', () => resolve());
    setTimeout(() => socket.destroy(), 2_000);
  });
}
