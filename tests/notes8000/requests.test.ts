import { describe, expect, test } from 'vitest';
import type { Reply } from '../../harness/http.js';
import { useNotes8000 } from '../support/notes8000.js';

const { call, createNote } = useNotes8000();

describe('notes8000 routing', () => {
  const allowOf = (answer: Reply) => String(answer.headers.allow).split(', ').sort();

  test("a known path with another method answers 405, the path's methods in Allow", async () => {
    const onNote = await call('PATCH', '/notes/1', { json: { title: 'x' } });
    expect(onNote).toMatchObject({ status: 405, json: { detail: 'Method Not Allowed' } });
    expect(allowOf(onNote)).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);

    const onCollection = await call('DELETE', '/notes');
    expect(onCollection).toMatchObject({ status: 405, json: { detail: 'Method Not Allowed' } });
    expect(allowOf(onCollection)).toEqual(['GET', 'HEAD', 'POST']);

    const onHealth = await call('POST', '/health');
    expect(onHealth.status).toBe(405);
    expect(allowOf(onHealth)).toEqual(['GET', 'HEAD']);

    const options = await call('OPTIONS', '/notes');
    expect(options.status).toBe(200);
    expect(allowOf(options)).toEqual(['GET', 'HEAD', 'POST']);
  });

  test('HEAD answers as GET does, without body, on paths with and without parameters', async () => {
    const note = await createNote();
    for (const path of ['/health', '/notes', `/notes/${note.id}`]) {
      const [head, get] = [await call('HEAD', path), await call('GET', path)];
      expect(head.status, path).toBe(200);
      expect(head.body.length, path).toBe(0);
      expect(head.headers['content-type'], path).toBe(get.headers['content-type']);
    }
    expect((await call('HEAD', '/notes/999999')).status).toBe(404);
  });

  test('paths are matched exactly: letter case and a slash count', async () => {
    for (const path of ['/HEALTH', '/Notes', '/health/'])
      expect((await call('GET', path)).status, path).not.toBe(200);
  });

  test('an unknown path answers 404 {detail: "Not Found"}', async () => {
    for (const path of ['/nope', '/notes/1/extra', '/']) {
      expect(await call('GET', path)).toMatchObject({ status: 404, json: { detail: 'Not Found' } });
    }
  });
});

describe('notes8000 trailing-slash redirects', () => {
  test('GET /notes/ redirects (307) to /notes as FastAPI does, relative Location', async () => {
    const answer = await call('GET', '/notes/');
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes');
    expect(answer.text).toBe('');
  });

  test('a trailing slash after a note id redirects too, keeping the query', async () => {
    const answer = await call('GET', '/notes/5/?x=1');
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes/5?x=1');
  });

  test('the redirect is never built from the Host header', async () => {
    const answer = await call('GET', '/notes/?x=1', { headers: { host: 'attacker.example' } });
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/notes?x=1');
  });
});
