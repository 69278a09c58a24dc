import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, type Reply } from '../harness/http.js';
import { startService, type StartedService } from '../harness/service.js';
import { auth, type AuthDeps } from '../server/services.js';
import { builtSpa, ensureSpaBuilt, type Spa } from '../server/auth/spa.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import { loadConfig } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { startTestService } from './support/services.js';

// What the pages send over the wire: rendered HTML, compressed text, cache lifetimes.

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const USER = { email: 'user@example.com', password: 'user-password' };

let spa: Spa;
let service: StartedService<AuthDeps>;
const notesServices: StartedService<NotesDeps>[] = [];

beforeAll(async () => {
  await ensureSpaBuilt();
  spa = await builtSpa();
  service = await startService(auth, {
    deps: { config: loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024' }).auth, spa },
  });
  for (const descriptor of [notes8080, notes8000])
    notesServices.push(
      await startTestService(descriptor, { deps: { config: loadConfig({}).notes } }),
    );
});
afterAll(async () => {
  await Promise.all([service, ...notesServices].map((started) => started?.close()));
  expect(service.logs.errors()).toEqual([]);
});

const get = (path: string, headers: Record<string, string> = {}, url = service.url) =>
  send(url, { method: 'GET', path, headers });

async function sessionCookie(credentials: typeof USER): Promise<string> {
  const reply = await service.request('POST', '/api/login', { json: credentials });
  return reply.headers['set-cookie']!.find((line) => line.startsWith('token='))!.split(';')[0]!;
}

/** The body as the browser reads it, whatever its encoding. */
function decoded(reply: Reply): string {
  const encoding = reply.headers['content-encoding'];
  const body =
    encoding === 'br'
      ? brotliDecompressSync(reply.body)
      : encoding === 'gzip'
        ? gunzipSync(reply.body)
        : reply.body;
  return body.toString('utf8');
}

describe('pages rendered on the server', () => {
  it('sends the dashboard with the user’s email, role, admin menu, title in HTML', async () => {
    const html = (await get('/dashboard', { cookie: await sessionCookie(ADMIN) })).text;
    expect(html).toContain('<title>ダッシュボード</title>');
    expect(html).toContain(`ようこそ、${ADMIN.email} さん`);
    expect(html).toContain('ロール: 管理者 (admin)');
    expect(html).toContain('管理メニュー');
    expect(html).toContain('ユーザ管理');
    expect(html).toContain('システム設定');
    expect(html).toMatch(/<meta name="robots" content="noindex"/);
    expect(html).toMatch(/<meta name="description" content="[^"]+"/);
  });

  it('leaves the admin menu out of a user’s dashboard', async () => {
    const html = (await get('/dashboard', { cookie: await sessionCookie(USER) })).text;
    expect(html).toContain(`ようこそ、${USER.email} さん`);
    expect(html).toContain('ロール: 一般ユーザー (user)');
    expect(html).not.toContain('管理メニュー');
  });

  it('sends /login with its form in the HTML, the same for every visitor', async () => {
    const [first, second] = [
      await get('/login'),
      await get('/login', { cookie: await sessionCookie(USER) }),
    ];
    expect(first.text).toBe(second.text);
    expect(first.text).toContain('<title>ログイン</title>');
    expect(first.text).toMatch(/<form[\s>]/);
    expect(first.text).toMatch(/<input type="email"[^>]* name="email"/);
    expect(first.text).toMatch(/<input type="password"[^>]* name="password"/);
  });

  it(
    'lets search engines index /login, with a ' +
      'description, and keeps the account pages out of them',
    async () => {
      const login = (await get('/login')).text;
      expect(login).not.toMatch(/<meta name="robots"/);
      expect(login).toMatch(/<meta name="description" content="[^"]+"/);
      const cookie = await sessionCookie(ADMIN);
      for (const path of ['/dashboard', '/admin/users', '/admin/settings']) {
        expect((await get(path, { cookie })).text, path).toMatch(
          /<meta name="robots" content="noindex"/,
        );
      }
      const forbidden = await get('/admin/users', { cookie: await sessionCookie(USER) });
      expect(forbidden.status).toBe(403);
      expect(forbidden.text).toMatch(/<meta name="robots" content="noindex"/);
    },
  );

  it('keeps a value that could close the state’s script element escaped', async () => {
    const { renderDocument } =
      (await import('../web/src/server.js')) as typeof import('../web/src/server.js');
    const html = renderDocument(
      '<!--page-head--><div id="root"><!--page-markup--></div><!--page-state-->',
      '/dashboard',
      {
        page: 'dashboard',
        user: { id: '1', email: '</script><script>alert(1)</script>@example.com', role: 'user' },
      },
    );
    expect(html).not.toContain('</script><script>');
    expect(html.match(/<script/g)).toHaveLength(1);
  });
});

describe('compression', () => {
  const assetsOf = async (html: string) =>
    [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'],
  ])(
    'sends the hashed assets compressed at build time for Accept-Encoding %s (%s), varying on it',
    async (accepted, expected) => {
      const assets = await assetsOf((await get('/login')).text);
      expect(assets.length).toBeGreaterThanOrEqual(1);
      for (const asset of assets) {
        const [raw, compressed] = [
          await get(asset),
          await get(asset, { 'accept-encoding': accepted }),
        ];
        expect(raw.headers['content-encoding']).toBeUndefined();
        expect(compressed.headers['content-encoding'], asset).toBe(expected);
        expect(compressed.headers.vary).toMatch(/Accept-Encoding/i);
        expect(compressed.headers['cache-control']).toContain('immutable');
        expect(compressed.body.length).toBeLessThan(raw.body.length / 2);
        expect(decoded(compressed)).toBe(raw.text);
      }
    },
  );

  it('sends the pages compressed', async () => {
    const cookie = await sessionCookie(ADMIN);
    for (const path of ['/login', '/dashboard']) {
      const reply = await get(path, { 'accept-encoding': 'gzip, deflate, br, zstd', cookie });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-encoding'], path).toBe('br');
      expect(reply.headers.vary).toMatch(/Accept-Encoding/i);
      expect(decoded(reply)).toContain('<div id="root"><');
    }
    expect((await get('/login', { 'accept-encoding': 'gzip' })).headers['content-encoding']).toBe(
      'gzip',
    );
    // The same for every visitor: compressed once and sent with its length.
    const login = await get('/login', { 'accept-encoding': 'br' });
    expect(Number(login.headers['content-length'])).toBe(login.body.length);
  });

  it(
    'sends /openapi.json and Swagger UI’s files compressed on ' +
      'every service, the files cached a year at the page’s URLs',
    async () => {
      for (const url of [service.url, ...notesServices.map((notes) => notes.url)]) {
        const document = await get('/openapi.json', { 'accept-encoding': 'br, gzip' }, url);
        expect(document.headers['content-encoding']).toBe('br');
        expect(JSON.parse(decoded(document))).toHaveProperty('openapi');

        const files = [
          ...(await get('/docs', {}, url)).text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g),
        ].map((match) => match[1]!);
        expect(files.length).toBeGreaterThanOrEqual(3);
        for (const file of files) {
          const reply = await get(file, { 'accept-encoding': 'br, gzip' }, url);
          expect(reply.status, file).toBe(200);
          expect(reply.headers['cache-control'], file).toBe('public, max-age=31536000, immutable');
          // Swagger UI itself; its few hundred bytes of set-up gain nothing from compression.
          if (/swagger-ui(-bundle)?\.(css|js)\?/.test(file))
            expect(reply.headers['content-encoding'], file).toBe('br');
        }
        // Another URL of the same file may serve other bytes some day: checked again each time.
        expect((await get('/docs/swagger-ui.css', {}, url)).headers['cache-control']).toBe(
          'no-cache',
        );
      }
    },
  );

  const docsFiles = async (url: string) =>
    [...(await get('/docs', {}, url)).text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map(
      (match) => match[1]!,
    );

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['*', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', undefined],
    ['', undefined],
  ])(
    'sends the documents and Swagger UI’s files with their ' +
      'length, the same bytes for Accept-Encoding “%s” (%s)',
    async (accepted, expected) => {
      const url = notesServices[0]!.url;
      for (const path of ['/docs', '/openapi.json', ...(await docsFiles(url))]) {
        const [plain, reply] = [
          await get(path, {}, url),
          await get(path, accepted ? { 'accept-encoding': accepted } : {}, url),
        ];
        expect(plain.headers['content-encoding'], path).toBeUndefined();
        expect(Number(reply.headers['content-length']), path).toBe(reply.body.length);
        expect(reply.headers.vary, path).toMatch(/Accept-Encoding/i);
        const encoding = reply.headers['content-encoding'];
        // Text of a kilobyte or more is compressed; the set-up's few hundred bytes and the icon are
        // not.
        if (plain.body.length >= 1024 && !plain.headers['content-type']!.startsWith('image/'))
          expect(encoding, path).toBe(expected);
        else expect(encoding, path).toBeUndefined();
        const body =
          encoding === 'br'
            ? brotliDecompressSync(reply.body)
            : encoding === 'gzip'
              ? gunzipSync(reply.body)
              : reply.body;
        expect(body.equals(plain.body), path).toBe(true);
      }
    },
  );

  it(
    'compresses Swagger UI’s bundle once: a client ' +
      'asking for it again and again spends almost no CPU',
    async () => {
      const url = notesServices[1]!.url;
      const bundle = (await docsFiles(url)).find((file) => file.includes('swagger-ui-bundle.js'))!;
      const first = await get(bundle, { 'accept-encoding': 'br' }, url);
      const before = process.cpuUsage();
      const replies = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const bodies = [];
          for (let index = 0; index < 5; index++)
            bodies.push((await get(bundle, { 'accept-encoding': 'br' }, url)).body);
          return bodies;
        }),
      );
      const used = process.cpuUsage(before);
      for (const body of replies.flat()) expect(body.equals(first.body)).toBe(true);
      // Compressed at each request, these 40 answers took 1.5 to 2.5 s of CPU (about 40 ms each).
      expect((used.user + used.system) / 1000).toBeLessThan(500);
    },
  );

  it('leaves the API’s JSON answers as they are, whatever the request accepts', async () => {
    const reply = await get('/api/me', {
      'accept-encoding': 'br, gzip',
      cookie: await sessionCookie(USER),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBeUndefined();
    expect(reply.headers.vary).toBeUndefined();
    for (const notesService of notesServices) {
      const notes = await get('/notes', { 'accept-encoding': 'br, gzip' }, notesService.url);
      expect(notes.headers['content-encoding']).toBeUndefined();
      expect(notes.headers.vary).toBeUndefined();
    }
  });
});
