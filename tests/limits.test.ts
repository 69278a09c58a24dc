import http from 'node:http';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../server/config.js';
import { config, NOTES_SERVICES, statusAndBody } from './support/notesServices.js';
import { useNotesServices } from './support/notesServices.js';

// What a client can make a notes service spend: a storage cap, a write budget per client address,
// and lists streamed at once per address.

describe.each(NOTES_SERVICES)('$name: the storage cap (NOTES_MAX_BYTES)', (shape) => {
  const { descriptor, note, error } = shape;
  const full = { [error]: 'Storage limit reached: delete notes to make room' };
  const [cap, poolMax] = [60_000, 10];
  const [capped, pooled] = useNotesServices(
    descriptor,
    { pool: { maxBytes: 10_000 } },
    // Waits for a pooled connection are long here: this counts bytes, not time.
    { pool: { maxBytes: cap, poolMax, timeoutMs: 15_000 } },
  );

  test('a write past it is 507, storing nothing; deletes free room, kept answers too', async () => {
    const { call, count, service } = capped;
    const post = async (title: string, text: string, status: number, key?: string) => {
      const headers = key ? { 'idempotency-key': key } : {};
      const answer = await call('POST', '/notes', { json: note(title, text), headers });
      expect(answer.status, title).toBe(status);
      return answer.json as { id: number };
    };
    const kept = await post('kept', 'k'.repeat(4_000), 201);
    const second = await post('second', 's'.repeat(4_000), 201);
    expect(await post('over', 'o'.repeat(4_000), 507)).toEqual(full);
    expect(await count('over')).toBe(0);
    const grow = { json: note('kept', 'g'.repeat(9_000)) };
    expect(statusAndBody(await call('PUT', `/notes/${kept.id}`, grow))).toEqual([507, full]);
    const unchanged = note('kept', 'k'.repeat(4_000));
    expect((await call('GET', `/notes/${kept.id}`)).json).toMatchObject(unchanged);
    expect((await call('DELETE', `/notes/${second.id}`)).status).toBeLessThan(300);
    const fits = await post('fits again', 'f'.repeat(4_000), 201);
    // A refusal the service chose is its request line alone: no error-level line, no stack.
    expect(service().logs.errors()).toEqual([]);
    expect(service().logs.lines.filter((line) => line.status === 507)).toHaveLength(2);

    for (const { id } of [kept, fits]) await call('DELETE', `/notes/${id}`);
    const keyed = await post('keyed', 'b'.repeat(4_000), 201, 'k1');
    await call('DELETE', `/notes/${keyed.id}`);
    // The note is gone, but the answer kept for its key still takes its bytes.
    await post('keyed', 'b'.repeat(4_000), 507, 'k2');
  });

  test('writes running together pass it by a body per pooled connection at most', async () => {
    // A title and text of 904 bytes, and 96 for the row: 60 notes fit.
    const fitting = Math.floor(cap / (4 + 900 + 96));
    const answers: number[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const sent = Array.from({ length: 40 }, (_, i) => {
        const title = `w${String(wave * 40 + i).padStart(3, '0')}`;
        return pooled.call('POST', '/notes', { json: note(title, 'x'.repeat(900)) });
      });
      answers.push(...(await Promise.all(sent)).map((answer) => answer.status));
    }
    const errors = JSON.stringify(pooled.service().logs.errors());
    expect(new Set(answers), errors).toEqual(new Set([201, 507]));
    const stored = answers.filter((status) => status === 201).length;
    // A write does not see the ones other connections have not committed yet (see the migration).
    expect(stored).toBeLessThanOrEqual(fitting + poolMax - 1);
    expect(stored).toBeGreaterThanOrEqual(fitting);
    // And the count stays exact.
    const sum = 'SELECT sum(bytes)::int AS n FROM storage_shards';
    expect((await pooled.service().db.query(sum)).rows).toEqual([{ n: stored * 1_000 }]);
    const over = { json: note('over', 'x'.repeat(900)) };
    expect((await pooled.call('POST', '/notes', over)).status).toBe(507);
  });
});

describe.each(NOTES_SERVICES)('$name: what a client address may spend', (shape) => {
  const { descriptor, note, error, text } = shape;
  const budget = (writeBytesPerMinute: number) => ({
    deps: { config: { ...config, writeBytesPerMinute } },
  });
  const [big, small] = useNotesServices(descriptor, budget(4 * 2 ** 20), budget(10_000));
  const { call, count, service } = big;

  test('one address writing 1 MiB notes meets 429, Retry-After; another still writes', async () => {
    const big = (title: string, localAddress = '127.0.0.2') => ({
      json: note(title, 'x'.repeat(1_000_000)),
      localAddress,
    });
    const answers: number[] = [];
    for (let i = 0; i < 6; i++)
      answers.push((await call('POST', '/notes', big(`flood ${i}`))).status);
    expect(answers).toEqual([201, 201, 201, 201, 429, 429]);
    const refused = await call('POST', '/notes', big('refused'));
    const budgetSpent = { [error]: expect.stringContaining('NOTES_WRITE_BYTES_PER_MINUTE') };
    const retryAfter = expect.stringMatching(/^[1-9]\d*$/);
    expect([refused.status, refused.json, refused.headers['retry-after']]).toEqual([
      429,
      budgetSpent,
      retryAfter,
    ]);
    expect(await count('refused')).toBe(0);
    const [newest] = (await call('GET', '/notes')).json as [{ id: number }];
    const update = await call('PUT', `/notes/${newest.id}`, big('updated'));
    expect([update.status, update.headers['retry-after']]).toEqual([429, retryAfter]);
    expect((await call('GET', `/notes/${newest.id}`)).json).toEqual(newest);
    expect((await call('POST', '/notes', big('another client', '127.0.0.3'))).status).toBe(201);
  });

  test("a create spends what it adds to the storage count, its key's record included", async () => {
    /**
     * Creates from `address` until the first 429: as many answer 201 as the budget holds creates
     * of `each` bytes, and at most what it refilled meanwhile besides.
     */
    const expectCreates = async (address: string, each: number, key?: (i: number) => string) => {
      const started = performance.now();
      for (let created = 0; ; created++) {
        const answer = await small.call('POST', '/notes', {
          json: note('a', 'b'),
          headers: key ? { 'idempotency-key': key(created) } : {},
          localAddress: address,
        });
        if (answer.status !== 429) {
          expect(answer.status).toBe(201);
          continue;
        }
        const refilled = ((performance.now() - started) / 60_000) * 10_000;
        expect(created).toBeGreaterThanOrEqual(Math.floor(10_000 / each));
        return expect(created).toBeLessThanOrEqual(Math.floor((10_000 + refilled) / each));
      }
    };
    // Its texts (2 bytes) and what its row takes besides them (96).
    await expectCreates('127.0.0.4', 98);
    // With a 100-character key, its record too: the key twice, the fingerprint (43), the
    // answer (taken as the texts) and 120.
    await expectCreates('127.0.0.5', 98 + 200 + 43 + 2 + 120, (i) => `${i}`.padStart(100, 'k'));
  });

  test('two full lists stream at once; a third is 429, Retry-After; others read', async () => {
    // Ten notes of 1 MiB: far more than the sockets' buffers hold while nobody reads.
    await service().db.query(`INSERT INTO notes (title, ${text})
      SELECT 'big', repeat('x', 1048576) FROM generate_series(1, 10)`);
    const unread = (localAddress: string) =>
      new Promise<http.IncomingMessage>((resolve, reject) =>
        http
          .get(`${service().url}/notes`, { localAddress, agent: false }, resolve)
          .on('error', reject),
      );
    const held = [await unread('127.0.0.8'), await unread('127.0.0.8')];
    expect(held.map((answer) => answer.pause().statusCode)).toEqual([200, 200]);
    const third = await call('GET', '/notes', { localAddress: '127.0.0.8' });
    const busy = { [error]: 'This address reads 2 lists already: try again in 1 s' };
    expect([third.status, third.headers['retry-after'], third.json]).toEqual([429, '1', busy]);
    expect((await call('GET', '/notes', { localAddress: '127.0.0.9' })).status).toBe(200);
    for (const answer of held) answer.destroy();
    // A client that goes away is not a fault of the service: no error line, no stack.
    const gone = () =>
      service().logs.lines.filter((line) => line.msg === 'client went away during the answer');
    await expect.poll(() => gone().length).toBeGreaterThanOrEqual(2);
    expect(service().logs.errors()).toEqual([]);
    const again = async () => (await call('GET', '/notes', { localAddress: '127.0.0.8' })).status;
    await expect.poll(again).toBe(200);
  });
});

test('a write budget too small for a create of the largest body stops the start, saying so', () => {
  const budget = (bytes: string) =>
    loadConfig({ BODY_LIMIT_BYTES: '1000', NOTES_WRITE_BYTES_PER_MINUTE: bytes });
  expect(() => budget('3000')).toThrow(
    new ConfigError(
      'NOTES_WRITE_BYTES_PER_MINUTE=3000 is too small: a create of a body of ' +
        'BODY_LIMIT_BYTES=1000 may spend 3024, and would never be written; set it to at least that',
    ),
  );
  expect(() => budget('3024')).not.toThrow();
});
