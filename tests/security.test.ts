import net from 'node:net';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../harness/http.js';
import { startReverseProxy } from '../harness/reverseProxy.js';
import { startService, type StartedService } from '../harness/service.js';
import { auth, type AuthDeps } from '../server/services.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../server/auth/spa.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import { loadConfig, type Edge } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { startTestService } from './support/services.js';

// The edge of every service: which hosts it answers, whom it believes about the client, the
// headers on every answer, what it logs, how it reads text, what it serves as files.

const USER = { email: 'user@example.com', password: 'user-password' };
let spa: Spa;
const started: StartedService<NotesDeps | AuthDeps>[] = [];

beforeAll(async () => {
  await ensureSpaBuilt();
  spa = await builtSpa();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((service) => service.close()));
});

async function notes(descriptor: typeof notes8080 | typeof notes8000, edge?: Edge) {
  const service = await startTestService(descriptor, {
    deps: { config: loadConfig({}).notes },
    edge,
  });
  started.push(service);
  return service;
}

async function login(env: Record<string, string> = {}) {
  const config = loadConfig({ PASSWORD_HASH_COST: '1024', ...env });
  const service = await startService(auth, {
    deps: { config: config.auth, spa },
    edge: config.edge.auth,
  });
  started.push(service);
  return service;
}

describe('the Host allowlist', () => {
  const defaults = loadConfig({});

  test("notes8000, bound to loopback, answers only this machine's names by default", async () => {
    const service = await notes(notes8000, defaults.edge.notes8000);
    const port = new URL(service.url).port;
    for (const host of [
      '127.0.0.1',
      `127.0.0.1:${port}`,
      'localhost',
      `localhost:${port}`,
      '[::1]',
      `[::1]:${port}`,
      'LOCALHOST',
    ]) {
      expect((await service.request('GET', '/notes', { headers: { host } })).status, host).toBe(
        200,
      );
    }
  });

  test(
    'notes8000 refuses a page of another site pointed at ' +
      '127.0.0.1 (DNS rebinding): reads and writes, 400 {detail}',
    async () => {
      const service = await notes8000Seeded(defaults.edge.notes8000);
      const host = `rebind.attacker.example:${new URL(service.url).port}`;
      for (const [method, path, json] of [
        ['GET', '/notes', undefined],
        ['POST', '/notes', { title: 'planted', content: 'x' }],
        ['DELETE', '/notes/1', undefined],
        ['GET', '/docs', undefined],
      ] as const) {
        const answer = await send(service.url, { method, path, json, headers: { host } });
        expect(answer.status, `${method} ${path}`).toBe(400);
        expect(answer.json).toEqual({ detail: 'Invalid Host header' });
      }
      const { rows } = await service.db.query('SELECT title FROM notes ORDER BY id');
      expect(rows).toEqual([{ title: 'kept' }]);
    },
  );

  test('a redirect never names the Host the client sent', async () => {
    const service = await notes(notes8000, { production: false });
    const answer = await send(service.url, {
      method: 'GET',
      path: '/notes/',
      headers: { host: 'evil.example' },
    });
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes');
  });

  test(
    'notes8080 and the login service answer any host unless ' +
      'configured; configured, others get 400 in their shape',
    async () => {
      const open = await notes(notes8080, defaults.edge.notes8080);
      expect(
        (await open.request('GET', '/notes', { headers: { host: 'anything.example' } })).status,
      ).toBe(200);
      const closed = await notes(
        notes8080,
        loadConfig({ NOTES8080_ALLOWED_HOSTS: 'notes.example, notes.example:8443' }).edge.notes8080,
      );
      expect(
        (await closed.request('GET', '/notes', { headers: { host: 'notes.example' } })).status,
      ).toBe(200);
      expect(
        (await closed.request('GET', '/notes', { headers: { host: 'notes.example:8443' } })).status,
      ).toBe(200);
      const refused = await closed.request('GET', '/notes', { headers: { host: 'other.example' } });
      expect([refused.status, refused.json]).toEqual([400, { error: 'Invalid Host header' }]);
      const login8 = await login({ AUTH_ALLOWED_HOSTS: 'app.example' });
      const refusedLogin = await login8.request('POST', '/api/login', {
        json: USER,
        headers: { host: 'other.example' },
      });
      expect([refusedLogin.status, refusedLogin.json]).toEqual([
        400,
        { error: 'Invalid Host header' },
      ]);
    },
  );

  test('a client sending hundreds of different Host values changes no later verdict', async () => {
    const service = await notes(notes8000, defaults.edge.notes8000);
    const status = async (host: string) =>
      (await service.request('GET', '/live', { headers: { host } })).status;
    for (let i = 0; i < 150; i++) {
      expect(await status(`localhost:${1000 + i}`)).toBe(200);
      expect(await status(`h${i}.example`)).toBe(400);
    }
    for (const [host, expected] of [
      ['localhost:1000', 200],
      ['h0.example', 400],
      ['LOCALHOST:1001', 200],
      ['h1.example, localhost', 400],
      ['localhost, h1.example', 200],
    ] as const) {
      expect(await status(host), host).toBe(expected);
    }
  });

  async function notes8000Seeded(edge: Edge) {
    const service = await notes(notes8000, edge);
    await service.request('POST', '/notes', {
      json: { title: 'kept', content: 'x' },
      headers: { host: '127.0.0.1' },
    });
    return service;
  }
});

describe('security headers on every answer of every service', () => {
  const expectShared = (headers: Record<string, unknown>, where: string) => {
    expect(headers['x-content-type-options'], where).toBe('nosniff');
    expect(headers['x-frame-options'], where).toBe('DENY');
    expect(headers['referrer-policy'], where).toBe('no-referrer');
    expect(String(headers['content-security-policy']), where).toContain("frame-ancestors 'none'");
  };

  test('notes answers, errors and unmatched requests included; HSTS in production', async () => {
    for (const descriptor of [notes8080, notes8000]) {
      const service = await notes(descriptor, { production: true });
      for (const path of [
        '/notes',
        '/notes/999999',
        '/nowhere',
        '/openapi.json',
        '/docs',
        '/docs/swagger-ui.css',
      ]) {
        const answer = await send(service.url, { method: 'GET', path });
        expectShared(answer.headers, `${descriptor.name} ${path}`);
        expect(answer.headers['strict-transport-security'], path).toMatch(/max-age=31536000/);
      }
      const development = await notes(descriptor, { production: false });
      expect(
        (await send(development.url, { method: 'GET', path: '/notes' })).headers[
          'strict-transport-security'
        ],
      ).toBeUndefined();
    }
  });

  test('/docs: a policy Swagger UI works under (its own files only), and no framing', async () => {
    const service = await notes(notes8000);
    const docs = await send(service.url, { method: 'GET', path: '/docs' });
    const csp = String(docs.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(docs.headers['x-frame-options']).toBe('DENY');
  });
});

describe('clients behind a reverse proxy (TRUST_PROXY)', () => {
  test('a client failing logins through the proxy blocks itself, not others behind', async () => {
    const service = await login({ TRUST_PROXY: '1' });
    const proxy = await startReverseProxy(service.url);
    try {
      const through = (from: string, password: string, headers: Record<string, string> = {}) =>
        send(proxy.url, {
          method: 'POST',
          path: '/api/login',
          json: { email: USER.email, password },
          localAddress: from,
          headers,
        });
      // The attacker also claims to be someone else: the leftmost X-Forwarded-For is its own word.
      for (let attempt = 0; attempt < 5; attempt++)
        expect(
          (await through('127.0.0.2', 'wrong', { 'x-forwarded-for': '127.0.0.3' })).status,
        ).toBe(401);
      expect((await through('127.0.0.2', USER.password)).status).toBe(429);
      expect((await through('127.0.0.3', USER.password)).status).toBe(200);
      expect((await through('127.0.0.4', USER.password)).status).toBe(200);
    } finally {
      await proxy.stop();
    }
  });

  test('without TRUST_PROXY, forwarding headers are ignored: clients pick no address', async () => {
    const service = await login();
    const attempt = (forwardedFor: string, password: string) =>
      service.request('POST', '/api/login', {
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
    [
      'notes8080',
      notes8080,
      { title: 'café', body: 'x' },
      400,
      { error: 'Request body is not valid JSON: Invalid UTF-8 (at character 13)' },
    ],
    [
      'notes8000',
      notes8000,
      { title: 'café', content: 'x' },
      422,
      {
        detail: [
          {
            type: 'json_invalid',
            loc: ['body', 13],
            msg: 'JSON decode error',
            input: {},
            ctx: { error: 'Invalid UTF-8' },
          },
        ],
      },
    ],
  ] as const)(
    '%s: invalid UTF-8 is malformed, and stores nothing',
    async (_, descriptor, note, status, body) => {
      const service = await notes(descriptor);
      const latin1 = Buffer.from(JSON.stringify(note), 'latin1');
      const answer = await service.request('POST', '/notes', {
        body: latin1,
        headers: { 'content-type': 'application/json' },
      });
      expect([answer.status, answer.json]).toEqual([status, body]);
      expect((await service.db.query('SELECT count(*)::int AS n FROM notes')).rows).toEqual([
        { n: 0 },
      ]);
    },
  );

  test.each([
    ['notes8080', notes8080, 'error'],
    ['notes8000', notes8000, 'detail'],
  ] as const)(
    '%s: a JSON body declaring another charset answers 415, and stores nothing',
    async (_, descriptor, key) => {
      const service = await notes(descriptor);
      const answer = await service.request('POST', '/notes', {
        body: Buffer.from('{"title":"café","body":"x","content":"x"}', 'latin1'),
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      });
      expect([answer.status, answer.json]).toEqual([
        415,
        { [key]: 'Unsupported charset "iso-8859-1": JSON is UTF-8' },
      ]);
      expect((await service.db.query('SELECT count(*)::int AS n FROM notes')).rows).toEqual([
        { n: 0 },
      ]);
    },
  );

  test('UTF-8 declared in any spelling is read as it was sent', async () => {
    const service = await notes(notes8080);
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      const answer = await service.request('POST', '/notes', {
        body: Buffer.from(JSON.stringify({ title: 'café ☕' }), 'utf8'),
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect((answer.json as { title: string }).title).toBe('café ☕');
    }
  });

  test(
    'a client sending hundreds of different Content-Types ' +
      'changes nothing in how later bodies are read',
    async () => {
      const service = await notes(notes8080);
      const post = (contentType: string, body: string) =>
        service.request('POST', '/notes', {
          body: Buffer.from(body),
          headers: { 'content-type': contentType },
        });
      expect((await post('application/json; charset=iso-8859-1', '{"title":"x"}')).status).toBe(
        415,
      );
      for (let i = 0; i < 300; i++)
        expect((await post(`application/json; variant=${i}`, '{}')).status).toBe(400);
      expect([
        (await post('application/json; charset=iso-8859-1', '{"title":"x"}')).status,
        (await post('application/json', '{"title":"x"}')).status,
      ]).toEqual([415, 201]);
      expect((await service.db.query('SELECT count(*)::int AS n FROM notes')).rows).toEqual([
        { n: 1 },
      ]);
    },
  );
});

describe('files of the login service', () => {
  test.each(['/assets/../index.html', '/assets/%2e%2e/index.html', '/assets/..%2findex.html'])(
    '%s is not the page shell',
    async (path) => {
      const service = await login();
      const answer = await send(service.url, { method: 'GET', path });
      expect(answer.status).toBe(404);
      expect(answer.text).not.toContain('<div id="root">');
      expect(answer.headers['cache-control'] ?? '').not.toContain('immutable');
    },
  );
});

describe('logs never hold secrets', () => {
  test(
    'a malformed chunked body with a session cookie ' +
      'logs neither the cookie nor the raw request',
    async () => {
      const secret = 'c0ffee00-dead-beef-0000-5ecre7000000';
      const targets = [
        { service: await notes(notes8080), path: '/notes' },
        { service: await notes(notes8000), path: '/notes' },
        { service: await login(), path: '/api/login' },
      ];
      for (const { service, path } of targets) {
        const { port } = new URL(service.url);
        await rawRequest(
          Number(port),
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ` +
            `token=${secret}\r\nContent-Type: application/json\r\n` +
            `Transfer-Encoding: chunked\r\n\r\nzz\r\n{"title":"x"}\r\n0\r\n\r\n`,
        );
        await send(service.url, {
          method: 'POST',
          path,
          body: '{"title":',
          headers: { 'content-type': 'application/json', cookie: `token=${secret}` },
        });
        expect(JSON.stringify(service.logs.lines), service.url).not.toContain(secret);
      }
    },
  );
});

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    setTimeout(() => socket.destroy(), 2_000);
  });
}
