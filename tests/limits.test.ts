import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { send } from '../harness/http.js';
import { watchUntilClosed } from '../harness/tcpTable.js';
import type { StartedService } from '../harness/service.js';
import { notes8080 } from '../server/services.js';
import { ConfigError, loadConfig } from '../server/config.js';
import type { NotesDeps, Service } from '../server/services.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { startTestService } from './support/services.js';

// What a client can make a notes service spend, and what it can trust: idempotent creates, a
// storage cap, a bounded number of connections, timeouts that fire on time.

const config = loadConfig({}).notes;
const started: StartedService<NotesDeps>[] = [];

async function start(
  descriptor: Service<NotesDeps>,
  options: Partial<Parameters<typeof startTestService<NotesDeps>>[1]> = {},
) {
  const service = await startTestService(descriptor, { deps: { config }, ...options });
  started.push(service);
  return service;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((service) => service.close()));
});

const count = async (service: StartedService<NotesDeps>, title: string) =>
  (
    await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM notes WHERE title = $1', [
      title,
    ])
  ).rows[0]!.n;

describe.each(NOTES_SERVICES)(
  '$name: Idempotency-Key on POST /notes',
  ({ descriptor, note, conflict, error }) => {
    test('a retry with the same key and body gets the first answer, creating nothing', async () => {
      const service = await start(descriptor);
      const headers = { 'idempotency-key': 'retry-1' };
      const first = await service.request('POST', '/notes', { json: note('once'), headers });
      const again = await service.request('POST', '/notes', { json: note('once'), headers });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.json).toEqual(first.json);
      expect(await count(service, 'once')).toBe(1);
    });

    test("the same key with another body is refused in the service's shape, unstored", async () => {
      const service = await start(descriptor);
      const headers = { 'idempotency-key': 'retry-2' };
      expect(
        (await service.request('POST', '/notes', { json: note('first body'), headers })).status,
      ).toBe(201);
      const other = await service.request('POST', '/notes', {
        json: note('another body'),
        headers,
      });
      expect(other.status).toBe(conflict);
      expect(other.json).toEqual({
        [error]: 'This Idempotency-Key was already used with another request body',
      });
      expect(await count(service, 'another body')).toBe(0);
    });

    test('different keys make different notes; keyless requests are not deduplicated', async () => {
      const service = await start(descriptor);
      await service.request('POST', '/notes', {
        json: note('keyed'),
        headers: { 'idempotency-key': 'a' },
      });
      await service.request('POST', '/notes', {
        json: note('keyed'),
        headers: { 'idempotency-key': 'b' },
      });
      await service.request('POST', '/notes', { json: note('keyed') });
      await service.request('POST', '/notes', { json: note('keyed') });
      expect(await count(service, 'keyed')).toBe(4);
    });

    test('parallel requests with one key create one note, and all get its answer', async () => {
      const service = await start(descriptor);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          service.request('POST', '/notes', {
            json: note('raced'),
            headers: { 'idempotency-key': 'race' },
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
      expect(await count(service, 'raced')).toBe(1);
    });

    test("a key is its client's: the same key from another address is another key", async () => {
      const service = await start(descriptor);
      const headers = { 'idempotency-key': 'predictable-1' };
      const mine = await service.request('POST', '/notes', {
        json: note('mine'),
        headers,
        localAddress: '127.0.0.6',
      });
      const theirs = await service.request('POST', '/notes', {
        json: note('theirs'),
        headers,
        localAddress: '127.0.0.7',
      });
      expect([mine.status, theirs.status]).toEqual([201, 201]);
      expect((theirs.json as { title: string }).title).toBe('theirs');
      const again = await service.request('POST', '/notes', {
        json: note('mine'),
        headers,
        localAddress: '127.0.0.6',
      });
      expect(again.json).toEqual(mine.json);
    });

    test('a malformed key is refused with 400 and creates nothing', async () => {
      const service = await start(descriptor);
      const answer = await service.request('POST', '/notes', {
        json: note('bad key'),
        headers: { 'idempotency-key': 'x'.repeat(256) },
      });
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        [error]: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      });
      expect(await count(service, 'bad key')).toBe(0);
    });

    test('a key is forgotten after IDEMPOTENCY_TTL_SECONDS', async () => {
      const service = await start(descriptor, {
        deps: { config: { ...config, idempotencyTtlSeconds: 1 } },
      });
      const headers = { 'idempotency-key': 'short-lived' };
      await service.request('POST', '/notes', { json: note('remembered'), headers });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(
        (await service.request('POST', '/notes', { json: note('remembered'), headers })).status,
      ).toBe(201);
      expect(await count(service, 'remembered')).toBe(2);
    });
  },
);

describe.each(NOTES_SERVICES)(
  '$name: the storage cap (NOTES_MAX_BYTES)',
  ({ descriptor, note, error }) => {
    const CAP = 10_000;
    const full = { [error]: 'Storage limit reached: delete notes to make room' };

    test(
      'a create or an update that would pass it answers ' +
        '507 and stores nothing; deleting makes room again',
      async () => {
        const service = await start(descriptor, { pool: { maxBytes: CAP } });
        const kept = await service.request('POST', '/notes', {
          json: note('kept', 'k'.repeat(4_000)),
        });
        expect(kept.status).toBe(201);
        const second = await service.request('POST', '/notes', {
          json: note('second', 's'.repeat(4_000)),
        });
        expect(second.status).toBe(201);

        const over = await service.request('POST', '/notes', {
          json: note('over', 'o'.repeat(4_000)),
        });
        expect(over.status).toBe(507);
        expect(over.json).toEqual(full);
        expect(await count(service, 'over')).toBe(0);

        const { id } = kept.json as { id: number };
        const grown = await service.request('PUT', `/notes/${id}`, {
          json: note('kept', 'g'.repeat(9_000)),
        });
        expect(grown.status).toBe(507);
        expect(grown.json).toEqual(full);
        expect((await service.request('GET', `/notes/${id}`)).json).toMatchObject(
          note('kept', 'k'.repeat(4_000)),
        );

        expect(
          (await service.request('DELETE', `/notes/${(second.json as { id: number }).id}`)).status,
        ).toBeLessThan(300);
        expect(
          (await service.request('POST', '/notes', { json: note('fits again', 'f'.repeat(4_000)) }))
            .status,
        ).toBe(201);
        // A refusal the service chose is its request line alone: no error-level line, no stack.
        expect(service.logs.errors()).toEqual([]);
        expect(service.logs.lines.filter((line) => line.status === 507)).toHaveLength(2);
      },
    );

    test('answers kept for idempotency keys count too', async () => {
      const service = await start(descriptor, { pool: { maxBytes: CAP } });
      const big = 'b'.repeat(4_000);
      const first = await service.request('POST', '/notes', {
        json: note('keyed', big),
        headers: { 'idempotency-key': 'k1' },
      });
      expect(first.status).toBe(201);
      await service.request('DELETE', `/notes/${(first.json as { id: number }).id}`);
      // The note is gone, but the answer kept for its key still takes its bytes.
      const second = await service.request('POST', '/notes', {
        json: note('keyed', big),
        headers: { 'idempotency-key': 'k2' },
      });
      expect(second.status).toBe(507);
    });

    test(
      'counts what a row costs on disk: one-letter notes stop at ' +
        "the computed count, and the count follows PostgreSQL's size",
      async () => {
        const cap = 100_000;
        const service = await start(descriptor, { pool: { maxBytes: cap } });
        const emptySize = await relationSize(service);
        // A one-letter title and text: 2 bytes of text and 96 for the row (docs/configuration.md).
        const fitting = Math.floor(cap / (2 + 96));
        let created = 0;
        for (;;) {
          const answer = await service.request('POST', '/notes', { json: note('a', 'b') });
          if (answer.status === 507) break;
          expect(answer.status).toBe(201);
          created++;
        }
        expect(created).toBe(fitting);
        await service.db.query('VACUUM notes');
        const counted = Number(
          (
            await service.db.query<{ bytes: string }>(
              'SELECT sum(bytes) AS bytes FROM storage_shards',
            )
          ).rows[0]!.bytes,
        );
        const onDisk = (await relationSize(service)) - emptySize;
        expect(counted / onDisk, `${counted} counted, ${onDisk} on disk`).toBeGreaterThan(0.6);
        expect(counted / onDisk, `${counted} counted, ${onDisk} on disk`).toBeLessThan(1.6);
      },
    );

    test(
      'writes running together pass it by one body per ' +
        'pooled connection at most, and the count stays exact',
      async () => {
        const cap = 60_000;
        const poolMax = 10;
        // Waits for a pooled connection are long here: this counts bytes, not time.
        const service = await start(descriptor, {
          pool: { maxBytes: cap, poolMax, timeoutMs: 15_000 },
        });
        // A title and text of 904 bytes, and 96 for the row: 60 notes fit.
        const fitting = Math.floor(cap / (4 + 900 + 96));
        const answers: number[] = [];
        for (let wave = 0; wave < 4; wave++) {
          const sent = Array.from({ length: 40 }, (_, i) =>
            service.request('POST', '/notes', {
              json: note(`w${String(wave * 40 + i).padStart(3, '0')}`, 'x'.repeat(900)),
            }),
          );
          answers.push(...(await Promise.all(sent)).map((answer) => answer.status));
        }
        expect(new Set(answers), JSON.stringify(service.logs.errors())).toEqual(
          new Set([201, 507]),
        );
        const stored = answers.filter((status) => status === 201).length;
        // A write does not see the ones other connections have not committed yet
        // (see the migration).
        expect(stored).toBeLessThanOrEqual(fitting + poolMax - 1);
        expect(stored).toBeGreaterThanOrEqual(fitting);
        const counted = Number(
          (
            await service.db.query<{ bytes: string }>(
              'SELECT sum(bytes) AS bytes FROM storage_shards',
            )
          ).rows[0]!.bytes,
        );
        expect(counted).toBe(stored * 1_000);
        expect(
          (await service.request('POST', '/notes', { json: note('over', 'x'.repeat(900)) })).status,
        ).toBe(507);
      },
    );
  },
);

/** What the notes and the kept answers take on disk, indexes included. */
const relationSize = async (service: StartedService<NotesDeps>) =>
  Number(
    (
      await service.db.query<{ bytes: string }>(
        `SELECT pg_total_relation_size('notes') + pg_total_relation_size('idempotency_keys')
           AS bytes`,
      )
    ).rows[0]!.bytes,
  );

describe.each(NOTES_SERVICES)(
  '$name: the write budget of a client address (NOTES_WRITE_BYTES_PER_MINUTE)',
  ({ descriptor, note, error }) => {
    test(
      'one address writing 1 MiB notes meets 429 with Retry-After, ' +
        'storing nothing, while another address still writes',
      async () => {
        const budget = 4 * 2 ** 20;
        const service = await start(descriptor, {
          deps: { config: { ...config, writeBytesPerMinute: budget } },
        });
        const big = (title: string) => note(title, 'x'.repeat(1_000_000));
        const answers: number[] = [];
        for (let i = 0; i < 6; i++)
          answers.push(
            (
              await service.request('POST', '/notes', {
                json: big(`flood ${i}`),
                localAddress: '127.0.0.2',
              })
            ).status,
          );
        expect(answers).toEqual([201, 201, 201, 201, 429, 429]);
        const refused = await service.request('POST', '/notes', {
          json: big('refused'),
          localAddress: '127.0.0.2',
        });
        expect(refused.status).toBe(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        expect(refused.json).toEqual({
          [error]: expect.stringContaining('NOTES_WRITE_BYTES_PER_MINUTE'),
        });
        expect(await count(service, 'refused')).toBe(0);
        const [newest] = (await service.request('GET', '/notes')).json as [{ id: number }];
        const update = await service.request('PUT', `/notes/${newest.id}`, {
          json: big('updated'),
          localAddress: '127.0.0.2',
        });
        expect(update.status).toBe(429);
        expect(Number(update.headers['retry-after'])).toBeGreaterThan(0);
        expect((await service.request('GET', `/notes/${newest.id}`)).json).toEqual(newest);
        expect(
          (
            await service.request('POST', '/notes', {
              json: big('another client'),
              localAddress: '127.0.0.3',
            })
          ).status,
        ).toBe(201);
      },
    );

    test(
      'a create spends what it adds to the storage count, not its text alone: ' +
        'one-letter notes (and their Idempotency-Keys) meet 429 at the computed count',
      async () => {
        const budget = 10_000;
        const service = await start(descriptor, {
          deps: { config: { ...config, writeBytesPerMinute: budget } },
        });
        /**
         * How many creates from `address` answer 201 before the first 429, and how many bytes the
         * bucket refilled meanwhile.
         */
        const createsUntilRefused = async (
          address: string,
          headers: (i: number) => Record<string, string>,
        ) => {
          const started = performance.now();
          for (let i = 0; ; i++) {
            const answer = await service.request('POST', '/notes', {
              json: note('a', 'b'),
              headers: headers(i),
              localAddress: address,
            });
            if (answer.status === 429)
              return { created: i, refilled: ((performance.now() - started) / 60_000) * budget };
            expect(answer.status).toBe(201);
          }
        };
        // Its texts (2 bytes) and what its row takes besides them (96).
        const plain = await createsUntilRefused('127.0.0.4', () => ({}));
        expect(plain.created).toBeGreaterThanOrEqual(Math.floor(budget / 98));
        expect(plain.created).toBeLessThanOrEqual(Math.floor((budget + plain.refilled) / 98));
        // With a 100-character key, its record too: the key twice, the fingerprint (43), the answer
        // (taken as the texts) and 120.
        const keyed = await createsUntilRefused('127.0.0.5', (i) => ({
          'idempotency-key': `${i}`.padStart(100, 'k'),
        }));
        const perKeyed = 98 + 200 + 43 + 2 + 120;
        expect(keyed.created).toBeGreaterThanOrEqual(Math.floor(budget / perKeyed));
        expect(keyed.created).toBeLessThanOrEqual(Math.floor((budget + keyed.refilled) / perKeyed));
      },
    );

    test(
      'a budget too small for one create of the largest ' +
        'body stops the start with a line saying so',
      () => {
        expect(() =>
          loadConfig({ BODY_LIMIT_BYTES: '1000', NOTES_WRITE_BYTES_PER_MINUTE: '3000' }),
        ).toThrow(
          new ConfigError(
            'NOTES_WRITE_BYTES_PER_MINUTE=3000 is too small: a create of a body of ' +
              'BODY_LIMIT_BYTES=1000 may spend 3024, and would never be written; set it to at ' +
              'least that',
          ),
        );
        expect(() =>
          loadConfig({ BODY_LIMIT_BYTES: '1000', NOTES_WRITE_BYTES_PER_MINUTE: '3024' }),
        ).not.toThrow();
      },
    );
  },
);

describe.each(NOTES_SERVICES)(
  '$name: full lists of a client address',
  ({ name, descriptor, error }) => {
    test('two stream at once; a third gets 429, Retry-After; another address reads', async () => {
      const service = await start(descriptor);
      const text = name === 'notes8080' ? 'body' : 'content';
      // Ten notes of 1 MiB: far more than the sockets' buffers hold while nobody reads.
      await service.db.query(
        `INSERT INTO notes (title, ${text})
          SELECT 'big', repeat('x', 1048576) FROM generate_series(1, 10)`,
      );
      const unread = (localAddress: string) =>
        new Promise<http.IncomingMessage>((resolve, reject) =>
          http
            .get(`${service.url}/notes`, { localAddress, agent: false }, resolve)
            .on('error', reject),
        );
      const held = [await unread('127.0.0.8'), await unread('127.0.0.8')];
      for (const answer of held) {
        expect(answer.statusCode).toBe(200);
        answer.pause();
      }
      const third = await service.request('GET', '/notes', { localAddress: '127.0.0.8' });
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBe('1');
      expect(third.json).toEqual({
        [error]: 'This address reads 2 lists already: try again in 1 s',
      });
      const elsewhere = await service.request('GET', '/notes', { localAddress: '127.0.0.9' });
      expect(elsewhere.status).toBe(200);
      for (const answer of held) answer.destroy();
      // A client that goes away is not a fault of the service: no error line, no stack.
      const gone = () =>
        service.logs.lines.filter((line) => line.msg === 'client went away during the answer');
      await expect.poll(() => gone().length).toBeGreaterThanOrEqual(2);
      expect(service.logs.errors()).toEqual([]);
      await expect
        .poll(
          async () =>
            (await service.request('GET', '/notes', { localAddress: '127.0.0.8' })).status,
        )
        .toBe(200);
    });
  },
);

describe('connections', () => {
  test('past the budget the oldest idle connection is closed and a new client served', async () => {
    const service = await start(notes8080, {
      limits: { maxConnections: 20, idleTimeoutMs: 30_000, headersTimeoutMs: 10_000 },
    });
    const { port } = new URL(service.url);
    const idle = await Promise.all(Array.from({ length: 40 }, () => openIdle(Number(port))));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answer = await service.request('GET', '/ready');
    expect(answer.status).toBe(200);
    const open = idle.filter((socket) => !socket.closed);
    expect(open.length).toBeLessThanOrEqual(20);
    // The oldest went first: the ones still open are the newest.
    expect(idle.slice(-open.length).every((socket) => !socket.closed)).toBe(true);
    idle.forEach((socket) => socket.destroy());
  });

  // Node looks at the header timeout once a second; a loaded machine may run that look late.
  const CHECK_EVERY_MS = 1_000;
  const LOADED_MACHINE_MS = 1_500;

  test(
    'a connection that sends nothing is closed after the ' +
      'header timeout, and at most a look of the server later',
    async () => {
      const headersTimeoutMs = 1_500;
      const service = await start(notes8080, {
        limits: { maxConnections: 100, idleTimeoutMs: 30_000, headersTimeoutMs },
      });
      const socket = await openIdle(Number(new URL(service.url).port));
      const opened = performance.now();
      const closedAfter = await new Promise<number>((resolve) =>
        socket.once('close', () => resolve(performance.now() - opened)),
      );
      // Not before the timeout (the half second: the server counts from its own accept)…
      expect(closedAfter).toBeGreaterThan(headersTimeoutMs - 500);
      // …and not left open: closed at the first look past it.
      expect(closedAfter).toBeLessThan(headersTimeoutMs + CHECK_EVERY_MS + LOADED_MACHINE_MS);
    },
  );

  test(
    'a client that stops sending its body is cut off after ' +
      'the idle timeout, long before the request timeout',
    async () => {
      const idleTimeoutMs = 3_000;
      const service = await start(notes8080, {
        limits: { maxConnections: 100, idleTimeoutMs, headersTimeoutMs: 10_000 },
      });
      const socket = await openIdle(Number(new URL(service.url).port));
      socket.write(
        'POST /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ' +
          'application/json\r\nContent-Length: 1000\r\n\r\n{"title": "',
      );
      const sent = performance.now();
      const closedAfter = await new Promise<number>((resolve) =>
        socket.once('close', () => resolve(performance.now() - sent)),
      );
      expect(closedAfter).toBeGreaterThan(idleTimeoutMs - 500);
      // The request timeout is 30 s: the stall is what ended it.
      expect(closedAfter).toBeLessThan(idleTimeoutMs + 2 * CHECK_EVERY_MS + LOADED_MACHINE_MS);
      expect((await send(service.url, { method: 'GET', path: '/ready' })).status).toBe(200);
    },
  );

  test('a stalled reader of a long answer is cut at the idle timeout, not twice it', async () => {
    const idleTimeoutMs = 5_000;
    const service = await start(notes8080, {
      limits: { maxConnections: 100, idleTimeoutMs, headersTimeoutMs: 10_000 },
    });
    await service.db.query(
      `INSERT INTO notes (title, body)
        SELECT 'n' || i, repeat('x', 50000) FROM generate_series(1, 400) AS i`,
    );
    const port = Number(new URL(service.url).port);
    const socket = await openIdle(port);
    socket.pause();
    socket.write(`GET /notes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    // Not reading while the server's side of the connection is watched in the kernel's table,
    // from the last byte the server put into it until it closes it (or twice the timeout).
    const { lastSentAt, closedAt } = await watchUntilClosed(
      port,
      socket.localPort!,
      2 * idleTimeoutMs,
    );
    expect(closedAt, 'the server closed the connection').toBeDefined();
    // The server's first look that sees the stall comes up to a second after it began, and the look
    // that should end it may fall a hair short of the timeout and leave it to the next one.
    expect(closedAt! - lastSentAt).toBeLessThan(
      idleTimeoutMs + 2 * CHECK_EVERY_MS + LOADED_MACHINE_MS,
    );
    // What the cut connection still carries is far less than the 20 MB the list takes.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(15_000_000);
    // The service goes on serving others.
    expect((await send(service.url, { method: 'GET', path: '/ready' })).status).toBe(200);
  });
});

/** A connection that sends nothing (and reads, and so sees its end, whatever the server sends). */
function openIdle(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.resume();
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}
