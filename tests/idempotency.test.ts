import { describe, expect, test } from 'vitest';
import { config, NOTES_SERVICES, useNotesServices } from './support/notesServices.js';

// A client that did not hear the answer to a create sends it again with the same Idempotency-Key,
// and gets the first answer instead of a second note.

describe.each(NOTES_SERVICES)(
  '$name: Idempotency-Key on POST /notes',
  ({ descriptor, note, conflict, error }) => {
    const [{ call, count }, short] = useNotesServices(
      descriptor,
      {},
      { deps: { config: { ...config, idempotencyTtlSeconds: 1 } } },
    );
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
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
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
      expect([answer.status, answer.json]).toEqual([
        400,
        { [error]: 'Idempotency-Key must be 1 to 255 visible ASCII characters' },
      ]);
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
  },
);
