import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedService } from '../harness/service.js';
import { loadConfig } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { startTestService } from './support/services.js';

// Opt-in paging of GET /notes: without parameters the whole list, as the specs say; with `limit`
// (and `before`, where the last page ended) one page, newest first, and a Link to the next.

type Page = { ids: number[]; next?: string };

describe.each(NOTES_SERVICES)(
  '$name: GET /notes in pages',
  ({ name, descriptor, note, error, invalid }) => {
    let service: StartedService<NotesDeps>;
    beforeAll(async () => {
      service = await startTestService(descriptor, { deps: { config: loadConfig({}).notes } });
    });
    afterAll(() => service?.close());

    const seed = async (count: number) => {
      const { rows } = await service.db.query<{ id: string }>(
        `INSERT INTO notes (title, ${name === 'notes8080' ? 'body' : 'content'})
          SELECT 'n' || i, 'x' FROM generate_series(1, $1::int) AS i RETURNING id`,
        [count],
      );
      return rows.map((row) => Number(row.id));
    };
    const page = async (path: string): Promise<Page> => {
      const answer = await service.request('GET', path);
      expect(answer.status).toBe(200);
      const link =
        answer.headers.link === undefined
          ? undefined
          : /^<([^>]+)>; rel="next"$/.exec(String(answer.headers.link))?.[1];
      if (answer.headers.link !== undefined)
        expect(link, String(answer.headers.link)).toBeDefined();
      return { ids: (answer.json as { id: number }[]).map((item) => item.id), next: link };
    };

    it(
      'walks the whole table, no note missed or repeated, ' +
        'while notes are created and deleted meanwhile',
      async () => {
        await service.db.query('DELETE FROM notes');
        const ids = await seed(230);
        const deleted = new Set(ids.filter((_, index) => index % 7 === 3));
        const seen: number[] = [];
        let path: string | undefined = '/notes?limit=25';
        for (let turn = 0; path; turn++) {
          const { ids: got, next } = await page(path);
          expect(got.length).toBeLessThanOrEqual(25);
          expect(got).toEqual([...got].sort((a, b) => b - a));
          seen.push(...got);
          // Meanwhile, others write: new notes (after the walk began), and deletions ahead of it.
          await service.request('POST', '/notes', { json: note(`written during page ${turn}`) });
          for (const id of [...deleted].slice(turn * 4, turn * 4 + 4))
            await service.request('DELETE', `/notes/${id}`);
          path = next;
        }
        expect(new Set(seen).size).toBe(seen.length);
        const keptThroughout = ids.filter((id) => !deleted.has(id));
        expect(
          seen.filter((id) => ids.includes(id) && !deleted.has(id)).sort((a, b) => a - b),
        ).toEqual(keptThroughout);
      },
    );

    it(
      'links to the next page only while older notes ' +
        'remain, and answers the whole list without parameters',
      async () => {
        await service.db.query('DELETE FROM notes');
        const ids = await seed(5);
        const first = await page('/notes?limit=3');
        expect(first.ids).toEqual([ids[4], ids[3], ids[2]]);
        expect(first.next).toBe(`/notes?limit=3&before=${ids[2]}`);
        const last = await page(first.next!);
        expect(last).toEqual({ ids: [ids[1], ids[0]], next: undefined });
        expect(await page('/notes?limit=5')).toEqual({ ids: [...ids].reverse(), next: undefined });
        expect(await page('/notes')).toEqual({ ids: [...ids].reverse(), next: undefined });
        expect(await page(`/notes?before=${ids[2]}`)).toEqual({
          ids: [ids[1], ids[0]],
          next: undefined,
        });
        expect(await page(`/notes?limit=2&before=${ids[0]}`)).toEqual({ ids: [], next: undefined });
      },
    );

    it.each(['0', '1001', 'ten', '-1', '2.5'])(
      "refuses limit=%s in the service's own shape",
      async (limit) => {
        const answer = await service.request('GET', `/notes?limit=${limit}`);
        expect(answer.status).toBe(invalid);
        if (name === 'notes8080')
          expect(answer.json).toEqual({ [error]: expect.stringContaining('limit') });
        else
          expect(answer.json).toEqual({
            detail: [expect.objectContaining({ loc: ['query', 'limit'], input: limit })],
          });
      },
    );

    it("refuses before=0 in the service's own shape", async () => {
      const answer = await service.request('GET', '/notes?limit=10&before=0');
      expect(answer.status).toBe(invalid);
      if (name === 'notes8000') {
        expect(answer.json).toEqual({
          detail: [
            {
              type: 'greater_than_equal',
              loc: ['query', 'before'],
              msg: 'Input should be greater than or equal to 1',
              input: '0',
              ctx: { ge: 1 },
            },
          ],
        });
      } else expect(answer.json).toEqual({ [error]: expect.stringContaining('before') });
    });

    it.each(['9007199254740991', '9007199254740992', '99999999999999999999'])(
      'takes before up to 2^53 - 1 and refuses before=%s past it, with or without limit',
      async (before) => {
        for (const query of [`limit=10&before=${before}`, `before=${before}`]) {
          const answer = await service.request('GET', `/notes?${query}`);
          if (before === '9007199254740991') {
            expect(answer.status).toBe(200);
            continue;
          }
          expect(answer.status).toBe(invalid);
          if (name === 'notes8080')
            expect(answer.json).toEqual({ [error]: expect.stringContaining('before') });
          else
            expect(answer.json).toEqual({
              detail: [
                expect.objectContaining({
                  type: 'less_than_equal',
                  loc: ['query', 'before'],
                  input: before,
                  ctx: { le: 9007199254740991 },
                }),
              ],
            });
        }
      },
    );
  },
);
