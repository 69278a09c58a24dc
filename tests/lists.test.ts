import { describe, expect, it } from 'vitest';
import { JSON_TYPE, NOTES_SERVICES, useNotesService } from './support/notesServices.js';

// GET /notes: without parameters the whole list, newest id first, as the specs say; with `limit`
// (and `before`, where the last page ended) one page, and a Link to the next. A list longer than
// one read batch (250 notes) comes from PostgreSQL in several statements and is streamed in
// pieces: every note's text must arrive as stored, whatever it holds.

/** Texts a stream cut in pieces could get wrong: JSON's escapes, control characters, UTF-8. */
const TEXTS = ['quote " backslash \\ slash /', 'new\nline\r\ttab', '\u0001\u0002\u001f\u007f'];
TEXTS.push('é ü 日本語 😀', '</script><!--', ',', ']', '\\.', '');

type Note = Record<string, unknown> & { id: number };

describe.each(NOTES_SERVICES)('$name GET /notes', ({ name, descriptor, note, text, ...shape }) => {
  const { service, call, create } = useNotesService(descriptor);
  const query = async <Row>(sql: string, values?: unknown[]) =>
    (await service().db.query(sql, values)).rows as Row[];
  /** Notes made by the store alone, `texts` as their titles; their ids, oldest first. */
  const seed = async (texts: string[], repeat = 1) => {
    const sql = `INSERT INTO notes (title, ${text})
      SELECT left(t, 100), repeat(reverse(t) || ' ', $2)
      FROM unnest($1::text[]) WITH ORDINALITY AS given(t, place) ORDER BY place RETURNING id`;
    return (await query<{ id: number }>(sql, [texts, repeat])).map((row) => row.id);
  };
  /** The stored notes newest first, as a list shows their id, title and text. */
  const stored = () => query(`SELECT id, title, ${text} FROM notes ORDER BY id DESC`);
  const listed = async (path: string) => {
    const answer = await call('GET', path);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(JSON_TYPE);
    const link = answer.headers.link && /^<([^>]+)>; rel="next"$/.exec(String(answer.headers.link));
    if (answer.headers.link !== undefined) expect(link, String(answer.headers.link)).toBeTruthy();
    return { notes: answer.json as Note[], next: link ? link[1] : undefined };
  };
  const ids = async (path: string) => {
    const { notes, next } = await listed(path);
    return { ids: notes.map((item) => item.id), next };
  };

  it('answers [] for an empty store, then every note once, newest first, as stored', async () => {
    expect((await listed('/notes')).notes).toEqual([]);
    await seed(
      Array.from({ length: 700 }, (_, i) => `${TEXTS[i % TEXTS.length]}${i}`),
      60,
    );
    const created = [await create(note('a')), await create(note('b')), await create(note('c'))];
    const { notes } = await listed('/notes');
    expect(notes.slice(0, 3)).toEqual(created.reverse());
    const shown = notes.map(({ id, title, [text]: body }) => ({ id, title, [text]: body }));
    expect(shown).toEqual(await stored());
    const times = notes.flatMap(({ created_at, updated_at = created_at }) => [
      created_at,
      updated_at,
    ]);
    expect(times.filter((time) => !shape.timestamp.test(String(time)))).toEqual([]);
    // A page of 1000, and one before an id: the same.
    expect((await listed('/notes?limit=1000')).notes).toEqual(notes);
    const middle = notes[300]!.id;
    expect((await listed(`/notes?limit=1000&before=${middle}`)).notes).toEqual(notes.slice(301));
  });

  it('pages through the whole table, none missed or repeated, as notes come and go', async () => {
    await query('DELETE FROM notes');
    const all = await seed(Array.from({ length: 230 }, (_, i) => `n${i}`));
    const deleted = new Set(all.filter((_, index) => index % 7 === 3));
    const seen: number[] = [];
    let path: string | undefined = '/notes?limit=25';
    for (let turn = 0; path; turn++) {
      const page = await ids(path);
      expect(page.ids.length).toBeLessThanOrEqual(25);
      expect(page.ids).toEqual([...page.ids].sort((a, b) => b - a));
      seen.push(...page.ids);
      // Meanwhile, others write: new notes (after the walk began), and deletions ahead of it.
      await create(note(`written during page ${turn}`));
      for (const id of [...deleted].slice(turn * 4, turn * 4 + 4))
        await call('DELETE', `/notes/${id}`);
      path = page.next;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const kept = all.filter((id) => !deleted.has(id));
    expect(seen.filter((id) => kept.includes(id)).sort((a, b) => a - b)).toEqual(kept);
  });

  it('links to the next page only while older notes remain; no parameters, no pages', async () => {
    await query('DELETE FROM notes');
    const all = await seed(['1', '2', '3', '4', '5']);
    const newest = [...all].reverse();
    const first = await ids('/notes?limit=3');
    expect(first).toEqual({ ids: newest.slice(0, 3), next: `/notes?limit=3&before=${all[2]}` });
    const last = (ids: number[]) => ({ ids, next: undefined });
    expect(await ids(first.next!)).toEqual(last([all[1], all[0]]));
    expect(await ids('/notes?limit=5')).toEqual(last(newest));
    expect(await ids('/notes')).toEqual(last(newest));
    expect(await ids(`/notes?before=${all[2]}`)).toEqual(last([all[1], all[0]]));
    expect(await ids(`/notes?limit=2&before=${all[0]}`)).toEqual(last([]));
  });

  /** The answer to a refused parameter, in the service's own shape. */
  const refusal = (parameter: string, input: string, entry: object = {}) =>
    name === 'notes8080'
      ? { [shape.error]: expect.stringContaining(parameter) }
      : { detail: [expect.objectContaining({ loc: ['query', parameter], input, ...entry })] };

  it.each(['0', '1001', 'ten', '-1', '2.5'])(
    "refuses limit=%s in the service's shape",
    async (limit) => {
      const answer = await call('GET', `/notes?limit=${limit}`);
      expect([answer.status, answer.json]).toEqual([shape.invalid, refusal('limit', limit)]);
    },
  );

  it("refuses before=0 in the service's own shape", async () => {
    const answer = await call('GET', '/notes?limit=10&before=0');
    const [loc, msg] = [['query', 'before'], 'Input should be greater than or equal to 1'];
    const atLeast1 = { type: 'greater_than_equal', loc, msg, input: '0', ctx: { ge: 1 } };
    const refused = name === 'notes8080' ? refusal('before', '0') : { detail: [atLeast1] };
    expect([answer.status, answer.json]).toEqual([shape.invalid, refused]);
  });

  it('takes before up to 2^53 - 1 and refuses it past that, with or without limit', async () => {
    const entry = { type: 'less_than_equal', ctx: { le: 9007199254740991 } };
    for (const limit of ['limit=10&', '']) {
      expect((await call('GET', `/notes?${limit}before=9007199254740991`)).status).toBe(200);
      for (const before of ['9007199254740992', '99999999999999999999']) {
        const answer = await call('GET', `/notes?${limit}before=${before}`);
        const refused = refusal('before', before, entry);
        expect([answer.status, answer.json]).toEqual([shape.invalid, refused]);
      }
    }
  });
});
