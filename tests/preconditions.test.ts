import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedService } from '../harness/service.js';
import { loadConfig } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { startTestService } from './support/services.js';

// Two people editing one note: each write says which version it read (If-Match), and the one that
// comes second is told (412) instead of silently erasing the first. Reads tell a client its copy
// is current (304). Without these headers the services answer exactly as their specs say.

describe.each(NOTES_SERVICES)('$name: ETags and preconditions', ({ descriptor, note, error }) => {
  let service: StartedService<NotesDeps>;
  beforeAll(async () => {
    service = await startTestService(descriptor, { deps: { config: loadConfig({}).notes } });
  });
  afterAll(() => service?.close());

  const create = async (title: string) => {
    const created = await service.request('POST', '/notes', { json: note(title, 'first') });
    expect(created.status).toBe(201);
    return { id: (created.json as { id: number }).id, etag: String(created.headers.etag) };
  };
  const stored = async (id: number) =>
    (await service.db.query('SELECT title, version FROM notes WHERE id = $1', [id])).rows[0];

  it(
    'gives a strong ETag on create, read and update, ' +
      'which changes with every change and only then',
    async () => {
      const { id, etag } = await create('versioned');
      expect(etag).toMatch(/^"[^"]+"$/);
      const read = await service.request('GET', `/notes/${id}`);
      expect(read.headers.etag).toBe(etag);
      const changed = await service.request('PUT', `/notes/${id}`, {
        json: note('versioned, edited', 'first'),
      });
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).not.toBe(etag);
      const same = await service.request('PUT', `/notes/${id}`, {
        json: note('versioned, edited', 'first'),
      });
      expect(same.headers.etag).toBe(changed.headers.etag);
      expect((await service.request('GET', `/notes/${id}`)).headers.etag).toBe(
        changed.headers.etag,
      );
    },
  );

  it(
    'answers 304 without a body when If-None-Match names the ' +
      'current version (weak or strong, or *), 200 otherwise',
    async () => {
      const { id, etag } = await create('cached');
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await service.request('GET', `/notes/${id}`, {
          headers: { 'if-none-match': header },
        });
        expect(cached.status, header).toBe(304);
        expect(cached.body.length).toBe(0);
        expect(cached.headers.etag).toBe(etag);
      }
      await service.request('PUT', `/notes/${id}`, { json: note('cached, edited') });
      const stale = await service.request('GET', `/notes/${id}`, {
        headers: { 'if-none-match': etag },
      });
      expect(stale.status).toBe(200);
      expect(stale.json).toMatchObject({ title: 'cached, edited' });
    },
  );

  it('refuses a PUT or DELETE whose If-Match names an old version: 412, no change', async () => {
    const { id, etag } = await create('contested');
    const first = await service.request('PUT', `/notes/${id}`, {
      json: note('the first save'),
      headers: { 'if-match': etag },
    });
    expect(first.status).toBe(200);
    const before = await stored(id);
    const second = await service.request('PUT', `/notes/${id}`, {
      json: note('the second save'),
      headers: { 'if-match': etag },
    });
    expect(second.status).toBe(412);
    expect(second.json).toEqual({ [error]: expect.stringContaining('If-Match') });
    const stale = await service.request('DELETE', `/notes/${id}`, {
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(await stored(id)).toEqual(before);
    expect((await service.request('GET', `/notes/${id}`)).json).toMatchObject({
      title: 'the first save',
    });
    // A list that names the current version among others lets the write through.
    const listed = await service.request('PUT', `/notes/${id}`, {
      json: note('a listed save'),
      headers: { 'if-match': `"0", ${etag}, ${first.headers.etag}` },
    });
    expect(listed.status).toBe(200);
    expect(
      (
        await service.request('DELETE', `/notes/${id}`, {
          headers: { 'if-match': `${etag}, ${listed.headers.etag}` },
        })
      ).status,
    ).toBeLessThan(300);
  });

  it('lets exactly one of two concurrent PUTs with the same ETag through', async () => {
    for (let round = 0; round < 5; round++) {
      const { id, etag } = await create(`race ${round}`);
      const answers = await Promise.all(
        ['left', 'right'].map((side) =>
          service.request('PUT', `/notes/${id}`, {
            json: note(`${side} ${round}`),
            headers: { 'if-match': etag },
          }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412]);
      const winner = answers.find((answer) => answer.status === 200)!;
      expect((await service.request('GET', `/notes/${id}`)).json).toEqual(winner.json);
    }
  });

  it(
    'treats * as any current note, and a named version of a ' +
      'deleted note as a change (412); * on a missing note is 404',
    async () => {
      const { id, etag } = await create('gone soon');
      expect(
        (
          await service.request('PUT', `/notes/${id}`, {
            json: note('still here'),
            headers: { 'if-match': '*' },
          })
        ).status,
      ).toBe(200);
      expect((await service.request('DELETE', `/notes/${id}`)).status).toBeLessThan(300);
      expect(
        (
          await service.request('PUT', `/notes/${id}`, {
            json: note('too late'),
            headers: { 'if-match': etag },
          })
        ).status,
      ).toBe(412);
      expect(
        (await service.request('DELETE', `/notes/${id}`, { headers: { 'if-match': etag } })).status,
      ).toBe(412);
      expect(
        (
          await service.request('PUT', `/notes/${id}`, {
            json: note('too late'),
            headers: { 'if-match': '*' },
          })
        ).status,
      ).toBe(404);
      expect(
        (await service.request('DELETE', `/notes/${id}`, { headers: { 'if-match': '*' } })).status,
      ).toBe(404);
      expect(
        (await service.request('GET', `/notes/${id}`, { headers: { 'if-none-match': '*' } }))
          .status,
      ).toBe(404);
    },
  );

  it('never matches a weak tag for a write; a malformed header matches nothing', async () => {
    const { id, etag } = await create('strict');
    expect(
      (
        await service.request('PUT', `/notes/${id}`, {
          json: note('weak'),
          headers: { 'if-match': `W/${etag}` },
        })
      ).status,
    ).toBe(412);
    expect(
      (
        await service.request('PUT', `/notes/${id}`, {
          json: note('garbled'),
          headers: { 'if-match': 'not-a-tag' },
        })
      ).status,
    ).toBe(412);
    expect(
      (await service.request('GET', `/notes/${id}`, { headers: { 'if-none-match': 'not-a-tag' } }))
        .status,
    ).toBe(200);
  });

  it("reads RFC 9110's list syntax exactly: any other form names no version", async () => {
    const { id, etag } = await create('lists');
    const write = (ifMatch: string) =>
      service.request('PUT', `/notes/${id}`, {
        json: note('lists'),
        headers: { 'if-match': ifMatch },
      });
    const read = (ifNoneMatch: string) =>
      service.request('GET', `/notes/${id}`, { headers: { 'if-none-match': ifNoneMatch } });
    for (const malformed of [
      `x${etag}`,
      `W/ ${etag}`,
      `${etag}x`,
      `${etag} ${etag}`,
      `"a", ${etag}x`,
    ])
      expect((await write(malformed)).status, malformed).toBe(412);
    for (const malformed of [`${etag}x`, `x${etag}`, `W/ ${etag}`])
      expect((await read(malformed)).status, malformed).toBe(200);
    // Empty elements and spaces around commas are the list syntax's own.
    expect((await read(` , "other",${etag} ,`)).status).toBe(304);
    expect((await write(`"other" , ${etag}`)).status).toBe(200);
  });
});
