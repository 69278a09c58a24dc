import { describe, expect, it, test } from 'vitest';
import { config, NOTES_SERVICES, useNotesServices } from './support/notesServices.js';

// Two people editing one note: each write says which version it read (If-Match), and the one that
// comes second is told (412) instead of silently erasing the first. Reads tell a client its copy
// is current (304). Without these headers the services answer exactly as their specs say.
// A client that did not hear the answer to a create sends it again with the same Idempotency-Key,
// and gets the first answer instead of a second note.

describe.each(NOTES_SERVICES)('$name: ETags and keys', ({ descriptor, note, conflict, error }) => {
  const [{ service, call, count }, short] = useNotesServices(
    descriptor,
    {},
    { deps: { config: { ...config, idempotencyTtlSeconds: 1 } } },
  );

  const create = async (title: string) => {
    const created = await call('POST', '/notes', { json: note(title, 'first') });
    expect(created.status).toBe(201);
    return { id: (created.json as { id: number }).id, etag: String(created.headers.etag) };
  };
  const only = (name: string, value?: string) => (value === undefined ? {} : { [name]: value });
  const read = (id: number, ifNoneMatch?: string) =>
    call('GET', `/notes/${id}`, { headers: only('if-none-match', ifNoneMatch) });
  const write = (id: number, title: string, ifMatch?: string) =>
    call('PUT', `/notes/${id}`, { json: note(title, 'first'), headers: only('if-match', ifMatch) });
  const remove = (id: number, ifMatch?: string) =>
    call('DELETE', `/notes/${id}`, { headers: only('if-match', ifMatch) });
  const stored = async (id: number) =>
    (await service().db.query('SELECT title, version FROM notes WHERE id = $1', [id])).rows[0];

  it('gives a strong ETag on create, read and update, changed by every change alone', async () => {
    const { id, etag } = await create('versioned');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await read(id)).headers.etag).toBe(etag);
    const changed = await write(id, 'versioned, edited');
    expect([changed.status, changed.headers.etag === etag]).toEqual([200, false]);
    expect((await write(id, 'versioned, edited')).headers.etag).toBe(changed.headers.etag);
    expect((await read(id)).headers.etag).toBe(changed.headers.etag);
  });

  it('answers 304, no body, when If-None-Match names the current version, else 200', async () => {
    const { id, etag } = await create('cached');
    // Weak or strong, or *.
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await read(id, header);
      expect([cached.status, cached.text, cached.headers.etag], header).toEqual([304, '', etag]);
    }
    await write(id, 'cached, edited');
    const stale = await read(id, etag);
    expect(stale).toMatchObject({ status: 200, json: { title: 'cached, edited' } });
  });

  it('refuses a PUT or DELETE whose If-Match names an old version: 412, no change', async () => {
    const { id, etag } = await create('contested');
    const first = await write(id, 'the first save', etag);
    expect(first.status).toBe(200);
    const before = await stored(id);
    const second = await write(id, 'the second save', etag);
    const stale = { [error]: expect.stringContaining('If-Match') };
    expect([second.status, second.json]).toEqual([412, stale]);
    expect((await remove(id, etag)).status).toBe(412);
    expect(await stored(id)).toEqual(before);
    expect((await read(id)).json).toMatchObject({ title: 'the first save' });
    // A list that names the current version among others lets the write through.
    const listed = await write(id, 'a listed save', `"0", ${etag}, ${first.headers.etag}`);
    expect(listed.status).toBe(200);
    expect((await remove(id, `${etag}, ${listed.headers.etag}`)).status).toBeLessThan(300);
  });

  it('lets exactly one of two concurrent PUTs with the same ETag through', async () => {
    for (let round = 0; round < 5; round++) {
      const { id, etag } = await create(`race ${round}`);
      const answers = await Promise.all(
        ['left', 'right'].map((side) => write(id, `${side} ${round}`, etag)),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412]);
      const winner = answers.find((answer) => answer.status === 200)!;
      expect((await read(id)).json).toEqual(winner.json);
    }
  });

  it("takes * for any current note; a deleted note's version is a change (412)", async () => {
    const { id, etag } = await create('gone soon');
    expect((await write(id, 'still here', '*')).status).toBe(200);
    expect((await remove(id)).status).toBeLessThan(300);
    expect((await write(id, 'too late', etag)).status).toBe(412);
    expect((await remove(id, etag)).status).toBe(412);
    // * on a missing note is 404.
    expect((await write(id, 'too late', '*')).status).toBe(404);
    expect((await remove(id, '*')).status).toBe(404);
    expect((await read(id, '*')).status).toBe(404);
  });

  it("reads RFC 9110's list syntax exactly; other forms, weak tags, match no write", async () => {
    const { id, etag } = await create('lists');
    const writes = [`W/${etag}`, 'not-a-tag', `x${etag}`, `W/ ${etag}`, `${etag}x`];
    for (const header of [...writes, `${etag} ${etag}`, `"a", ${etag}x`])
      expect((await write(id, 'lists', header)).status, header).toBe(412);
    for (const header of ['not-a-tag', `${etag}x`, `x${etag}`, `W/ ${etag}`])
      expect((await read(id, header)).status, header).toBe(200);
    // Empty elements and spaces around commas are the list syntax's own.
    expect((await read(id, ` , "other",${etag} ,`)).status).toBe(304);
    expect((await write(id, 'lists', `"other" , ${etag}`)).status).toBe(200);
  });

  const post = (title: string, key?: string, localAddress?: string) =>
    call('POST', '/notes', {
      json: note(title),
      headers: key === undefined ? {} : { 'idempotency-key': key },
      localAddress,
    });

  test('a retry with the same key gets the first answer; another body, a refusal', async () => {
    const first = await post('once', 'retry-1');
    const again = await post('once', 'retry-1');
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.json).toEqual(first.json);
    expect(await count('once')).toBe(1);
    // In the service's own shape, storing nothing.
    const other = await post('another body', 'retry-1');
    const reused = { [error]: 'This Idempotency-Key was already used with another request body' };
    expect([other.status, other.json]).toEqual([conflict, reused]);
    expect(await count('another body')).toBe(0);
  });

  test('different keys make different notes; keyless requests are not deduplicated', async () => {
    for (const key of ['a', 'b', undefined, undefined]) await post('keyed', key);
    expect(await count('keyed')).toBe(4);
  });

  test('parallel requests with one key create one note, and all get its answer', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => post('raced', 'race')));
    expect(answers.map((answer) => [answer.status, answer.text])).toEqual(
      Array(8).fill([201, answers[0]!.text]),
    );
    expect(await count('raced')).toBe(1);
  });

  test("a key is its client's: the same key from another address is another key", async () => {
    const mine = await post('mine', 'predictable-1', '127.0.0.6');
    const theirs = await post('theirs', 'predictable-1', '127.0.0.7');
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect((theirs.json as { title: string }).title).toBe('theirs');
    expect((await post('mine', 'predictable-1', '127.0.0.6')).json).toEqual(mine.json);
  });

  test('a malformed key is refused with 400 and creates nothing', async () => {
    const answer = await post('bad key', 'x'.repeat(256));
    const malformed = { [error]: 'Idempotency-Key must be 1 to 255 visible ASCII characters' };
    expect([answer.status, answer.json]).toEqual([400, malformed]);
    expect(await count('bad key')).toBe(0);
  });

  test('a key is forgotten after IDEMPOTENCY_TTL_SECONDS', async () => {
    const headers = { 'idempotency-key': 'short-lived' };
    const remember = () => short.call('POST', '/notes', { json: note('remembered'), headers });
    await remember();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await remember()).status).toBe(201);
    expect(await short.count('remembered')).toBe(2);
  });
});
