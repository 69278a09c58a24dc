import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedService } from '../harness/service.js';
import { loadConfig } from '../server/config.js';
import type { NotesDeps } from '../server/services.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { startTestService } from './support/services.js';

// A list longer than one read batch (250 notes) comes from PostgreSQL in several statements and is
// streamed in pieces: every note's text must arrive as stored, whatever it holds.

/** Texts a stream cut in pieces could get wrong: JSON's escapes, control characters, UTF-8. */
const TEXTS = [
  'quote " backslash \\ slash /',
  'new\nline\r\ttab',
  '\u0001\u0002\u001f\u007f',
  'é ü 日本語 😀',
  '</script><!--',
  ',',
  ']',
  '\\.',
  '',
];
const NOTES = 700;

describe.each(NOTES_SERVICES)('$name: GET /notes of several batches', ({ name, descriptor }) => {
  const textColumn = name === 'notes8080' ? 'body' : 'content';
  let service: StartedService<NotesDeps>;
  beforeAll(async () => {
    service = await startTestService(descriptor, { deps: { config: loadConfig({}).notes } });
    await service.db.query('DELETE FROM notes');
    const texts = Array.from(
      { length: NOTES },
      (_, index) => `${TEXTS[index % TEXTS.length]}${index}`,
    );
    await service.db.query(
      `INSERT INTO notes (title, ${textColumn})
        SELECT left(text, 100), repeat(reverse(text) || ' ', 60)
          FROM unnest($1::text[]) WITH ORDINALITY AS given(text, place) ORDER BY place`,
      [texts],
    );
  });
  afterAll(() => service?.close());

  /** The stored notes newest first, as the list shows their id, title and text. */
  const stored = async (below = Number.MAX_SAFE_INTEGER) =>
    (
      await service.db.query<{ id: string; title: string; text: string }>(
        `SELECT id, title, ${textColumn} AS text FROM notes WHERE id < $1 ORDER BY id DESC`,
        [below],
      )
    ).rows.map((row) => ({
      id: Number(row.id),
      title: row.title,
      [textColumn]: row.text,
    }));
  const listed = async (path: string) => {
    const answer = await service.request('GET', path);
    expect(answer.status).toBe(200);
    return (answer.json as Record<string, unknown>[]).map((note) => ({
      id: note.id,
      title: note.title,
      [textColumn]: note[textColumn],
    }));
  };

  it('the whole list: every note once, newest first, its text as stored', async () => {
    expect(await listed('/notes')).toEqual(await stored());
  });

  it('a page of 1000 and a page before an id: the same', async () => {
    const all = await stored();
    expect(await listed('/notes?limit=1000')).toEqual(all);
    const middle = all[300]!.id;
    expect(await listed(`/notes?limit=1000&before=${middle}`)).toEqual(await stored(middle));
  });
});
