import { describe, expect, it } from 'vitest';
import { JSON_TYPE, useNotes8080 } from '../support/notes8080.js';

describe('notes8080 requests', () => {
  const { service, call, storedNotes } = useNotes8080();

  describe('routing', () => {
    // Routing is strict: `/notes/` is not `/notes`.
    it.each(['/', '/note', '/notes/', '/notes/1/extra', '/api/notes'])(
      'answers 404 {error} for the unknown path %s',
      async (path) => {
        const response = await call('GET', path);
        expect(response.status).toBe(404);
        expect(response.headers['content-type']).toMatch(JSON_TYPE);
        expect(response.json).toEqual({ error: 'Not Found' });
      },
    );

    it('serves nothing at /notes/, not even a create', async () => {
      const before = await storedNotes();
      const response = await call('POST', '/notes/', { json: { title: 'slash' } });
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ error: 'Not Found' });
      expect(await storedNotes()).toEqual(before);
    });

    it.each([
      ['PATCH', '/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['POST', '/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['DELETE', '/notes', ['GET', 'HEAD', 'POST']],
      ['PUT', '/notes', ['GET', 'HEAD', 'POST']],
    ])('answers 405 {error} with an Allow header to %s %s', async (method, path, allowed) => {
      const response = await call(method, path, { json: { title: 'x' } });
      expect(response.status).toBe(405);
      expect(response.json).toEqual({ error: 'Method Not Allowed' });
      expect(String(response.headers.allow).split(/,\s*/).sort()).toEqual(allowed);
    });

    it.each([
      ['/notes/1', ['DELETE', 'GET', 'HEAD', 'PUT']],
      ['/notes', ['GET', 'HEAD', 'POST']],
    ])('answers OPTIONS %s with the methods of the path in Allow', async (path, allowed) => {
      const response = await call('OPTIONS', path);
      expect(response.status).toBe(200);
      expect(response.body.length).toBe(0);
      expect(String(response.headers.allow).split(/,\s*/).sort()).toEqual(allowed);
    });
  });

  it('logs one line per request and no error for client errors', async () => {
    await call('GET', '/notes/abc');
    await call('POST', '/notes', { json: {} });
    expect(service().logs.lines).toEqual([
      expect.objectContaining({ method: 'GET', path: '/notes/abc', status: 404 }),
      expect.objectContaining({ method: 'POST', path: '/notes', status: 400 }),
    ]);
  });

  it('caps a request line at 400 bytes whatever the path, the path cut and marked', async () => {
    const path = `/notes/${'x'.repeat(8_000)}`;
    expect((await call('GET', path)).status).toBe(404);
    const [line] = service().logs.lines;
    expect(line).toMatchObject({ method: 'GET', path: `${path.slice(0, 160)}…`, status: 404 });
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThanOrEqual(400);
  });
});
