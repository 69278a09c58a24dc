import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { send, type Reply } from '../harness/http.js';
import { ADMIN, USER } from './support/authClient.js';
import { useEachService } from './support/services.js';

// What the pages send over the wire: rendered HTML, compressed text, cache lifetimes.

const services = useEachService({ NODE_ENV: 'test' });
afterAll(() => expect(services.auth.logs.errors()).toEqual([]));

const get = (path: string, headers: Record<string, string> = {}, url = services.auth.url) =>
  send(url, { method: 'GET', path, headers });

async function sessionCookie(credentials: typeof USER): Promise<string> {
  const reply = await services.auth.request('POST', '/api/login', { json: credentials });
  return reply.headers['set-cookie']!.find((line) => line.startsWith('token='))!.split(';')[0]!;
}

/** The body as the browser reads it, whatever its encoding. */
function decoded(reply: Reply): Buffer {
  const encoding = reply.headers['content-encoding'];
  const decompress = { br: brotliDecompressSync, gzip: gunzipSync }[String(encoding)];
  return decompress ? decompress(reply.body) : reply.body;
}

const NOINDEX = /<meta name="robots" content="noindex"/;
const DESCRIPTION = /<meta name="description" content="[^"]+"/;

describe('pages rendered on the server', () => {
  it('sends the dashboard with the user’s email, role, admin menu, title in HTML', async () => {
    const html = (await get('/dashboard', { cookie: await sessionCookie(ADMIN) })).text;
    const welcome = `ようこそ、${ADMIN.email} さん`;
    for (const text of ['<title>ダッシュボード</title>', welcome, 'ロール: 管理者 (admin)'])
      expect(html).toContain(text);
    for (const text of ['管理メニュー', 'ユーザ管理', 'システム設定']) expect(html).toContain(text);
    expect(html).toMatch(NOINDEX);
    expect(html).toMatch(DESCRIPTION);
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

  it('lets search engines index /login, described; keeps account pages out of them', async () => {
    const login = (await get('/login')).text;
    expect(login).not.toMatch(/<meta name="robots"/);
    expect(login).toMatch(DESCRIPTION);
    const cookie = await sessionCookie(ADMIN);
    for (const path of ['/dashboard', '/admin/users', '/admin/settings'])
      expect((await get(path, { cookie })).text, path).toMatch(NOINDEX);
    const forbidden = await get('/admin/users', { cookie: await sessionCookie(USER) });
    expect([forbidden.status, forbidden.text]).toEqual([403, expect.stringMatching(NOINDEX)]);
  });

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
        expect(decoded(compressed).equals(raw.body)).toBe(true);
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
      expect(decoded(reply).toString()).toContain('<div id="root"><');
    }
    const gzipped = await get('/login', { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    // The same for every visitor: compressed once and sent with its length.
    const login = await get('/login', { 'accept-encoding': 'br' });
    expect(Number(login.headers['content-length'])).toBe(login.body.length);
  });

  const docsFiles = async (url: string) =>
    [...(await get('/docs', {}, url)).text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map(
      (match) => match[1]!,
    );

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['*', 'gzip'],
    ['br, gzip', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['identity', undefined],
    ['', undefined],
  ])(
    'sends every service’s documents and Swagger UI’s files with their length, ' +
      'the same bytes for Accept-Encoding “%s” (%s), the files cached a year',
    async (accepted, expected) => {
      for (const { url } of Object.values(services)) {
        const files = await docsFiles(url);
        expect(files.length, url).toBeGreaterThanOrEqual(3);
        for (const path of ['/docs', '/openapi.json', ...files]) {
          const [plain, reply] = [
            await get(path, {}, url),
            await get(path, accepted ? { 'accept-encoding': accepted } : {}, url),
          ];
          expect([plain.status, plain.headers['content-encoding']], path).toEqual([200, undefined]);
          expect(Number(reply.headers['content-length']), path).toBe(reply.body.length);
          expect(reply.headers.vary, path).toMatch(/Accept-Encoding/i);
          // Text of a kilobyte or more is compressed, Swagger UI's own files among it; the set-up's
          // few hundred bytes and the icon are not.
          const image = plain.headers['content-type']!.startsWith('image/');
          const compressed = plain.body.length >= 1024 && !image;
          if (/swagger-ui(-bundle)?\.(css|js)\?/.test(path)) expect(compressed, path).toBe(true);
          expect(reply.headers['content-encoding'], path).toBe(compressed ? expected : undefined);
          expect(decoded(reply).equals(plain.body), path).toBe(true);
          const year = 'public, max-age=31536000, immutable';
          if (files.includes(path)) expect(reply.headers['cache-control'], path).toBe(year);
        }
        const document = (await get('/openapi.json', {}, url)).json;
        expect(document).toHaveProperty('openapi');
        // Another URL of the same file may serve other bytes some day: checked again each time.
        const unversioned = await get('/docs/swagger-ui.css', {}, url);
        expect(unversioned.headers['cache-control']).toBe('no-cache');
      }
    },
  );

  it('compresses Swagger UI’s bundle once: repeated requests spend almost no CPU', async () => {
    const url = services.notes8000.url;
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
  });

  it('leaves the API’s JSON answers as they are, whatever the request accepts', async () => {
    const encodings = { 'accept-encoding': 'br, gzip' };
    const reply = await get('/api/me', { ...encodings, cookie: await sessionCookie(USER) });
    expect(reply.status).toBe(200);
    const notes = [services.notes8080, services.notes8000].map(({ url }) =>
      get('/notes', encodings, url),
    );
    for (const { headers } of [reply, ...(await Promise.all(notes))])
      expect([headers['content-encoding'], headers.vary]).toEqual([undefined, undefined]);
  });
});
