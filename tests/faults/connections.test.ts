import net from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { watchUntilClosed } from '../../harness/tcpTable.js';
import type { StartOptions } from '../../harness/service.js';
import { loadConfig } from '../../server/config.js';
import type { ConnectionLimits } from '../../server/http/listen.js';
import { notes8000, notes8080, type NotesDeps, type Service } from '../../server/services.js';
import { config, NOTES_SERVICES, type NotesService } from '../support/notesServices.js';
import { startTestService } from '../support/services.js';

// What takes long or waits on timeouts: connections held past their budget and their timeouts,
// a thousand creates to fill a storage cap, clients sending hundreds of variants of a header.

const started: NotesService[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((service) => service.close()));
});
async function start(descriptor: Service<NotesDeps>, options: Partial<StartOptions<NotesDeps>>) {
  const service = await startTestService(descriptor, { deps: { config }, ...options });
  started.push(service);
  return service;
}
/** notes8080 with what clients may hold: `limits`, or else 100 connections and long timeouts. */
const notes8080With = (limits: Partial<ConnectionLimits>) =>
  start(notes8080, {
    limits: { maxConnections: 100, idleTimeoutMs: 30_000, headersTimeoutMs: 10_000, ...limits },
  });
const ready = async (service: NotesService) => (await service.request('GET', '/ready')).status;

/** A connection that sends nothing (and reads, and so sees its end, whatever the server sends). */
function openIdle(url: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () => resolve(socket));
    socket.resume();
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}
const closedAfter = (socket: net.Socket, since = performance.now()) =>
  new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - since)));

describe('connections of notes8080', () => {
  // Node looks at the header timeout once a second; a loaded machine may run that look late.
  const LOOK_MS = 1_000;
  const LOADED_MACHINE_MS = 1_500;

  test('past the budget the oldest idle connection is closed and a new client served', async () => {
    const service = await notes8080With({ maxConnections: 20 });
    const idle = await Promise.all(Array.from({ length: 40 }, () => openIdle(service.url)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await ready(service)).toBe(200);
    const open = idle.filter((socket) => !socket.closed);
    expect(open.length).toBeLessThanOrEqual(20);
    // The oldest went first: the ones still open are the newest.
    expect(idle.slice(-open.length).every((socket) => !socket.closed)).toBe(true);
    idle.forEach((socket) => socket.destroy());
  });

  test('one sending nothing is closed after the header timeout, a look later at most', async () => {
    const headersTimeoutMs = 1_500;
    const service = await notes8080With({ headersTimeoutMs });
    const closed = await closedAfter(await openIdle(service.url));
    // Not before the timeout (the half second: the server counts from its own accept)…
    expect(closed).toBeGreaterThan(headersTimeoutMs - 500);
    // …and not left open: closed at the first look past it.
    expect(closed).toBeLessThan(headersTimeoutMs + LOOK_MS + LOADED_MACHINE_MS);
  });

  test('a client that stops sending its body is cut off after the idle timeout', async () => {
    const idleTimeoutMs = 3_000;
    const service = await notes8080With({ idleTimeoutMs });
    const socket = await openIdle(service.url);
    socket.write(
      'POST /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ' +
        'application/json\r\nContent-Length: 1000\r\n\r\n{"title": "',
    );
    const closed = await closedAfter(socket);
    expect(closed).toBeGreaterThan(idleTimeoutMs - 500);
    // Long before the request timeout (30 s): the stall is what ended it.
    expect(closed).toBeLessThan(idleTimeoutMs + 2 * LOOK_MS + LOADED_MACHINE_MS);
    expect(await ready(service)).toBe(200);
  });

  test('a stalled reader of a long answer is cut at the idle timeout, not twice it', async () => {
    const idleTimeoutMs = 5_000;
    const service = await notes8080With({ idleTimeoutMs });
    await service.db.query(`INSERT INTO notes (title, body)
      SELECT 'n' || i, repeat('x', 50000) FROM generate_series(1, 400) AS i`);
    const socket = await openIdle(service.url);
    socket.pause();
    socket.write(`GET /notes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    // Not reading while the server's side of the connection is watched in the kernel's table,
    // from the last byte the server put into it until it closes it (or twice the timeout).
    const port = Number(new URL(service.url).port);
    const watched = await watchUntilClosed(port, socket.localPort!, 2 * idleTimeoutMs);
    expect(watched.closedAt, 'the server closed the connection').toBeDefined();
    // The server's first look that sees the stall comes up to a second after it began, and the
    // look that should end it may fall a hair short of the timeout and leave it to the next one.
    expect(watched.closedAt! - watched.lastSentAt).toBeLessThan(
      idleTimeoutMs + 2 * LOOK_MS + LOADED_MACHINE_MS,
    );
    // What the cut connection still carries is far less than the 20 MB the list takes.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(15_000_000);
    // The service goes on serving others.
    expect(await ready(service)).toBe(200);
  });
});

describe.each(NOTES_SERVICES)(
  '$name: the storage cap (NOTES_MAX_BYTES)',
  ({ descriptor, note }) => {
    test("counts a row's cost on disk: one-letter notes stop at the computed count", async () => {
      const cap = 100_000;
      const service = await start(descriptor, { pool: { maxBytes: cap } });
      const bytes = async (sql: string) =>
        Number(
          (await service.db.query<{ bytes: string }>(`SELECT ${sql} AS bytes`)).rows[0]!.bytes,
        );
      /** What the notes and the kept answers take on disk, indexes included. */
      const onDisk = () =>
        bytes("pg_total_relation_size('notes') + pg_total_relation_size('idempotency_keys')");
      const emptySize = await onDisk();
      let created = 0;
      for (;;) {
        const answer = await service.request('POST', '/notes', { json: note('a', 'b') });
        if (answer.status === 507) break;
        expect(answer.status).toBe(201);
        created++;
      }
      // A one-letter title and text: 2 bytes of text and 96 for the row (docs/configuration.md).
      expect(created).toBe(Math.floor(cap / (2 + 96)));
      // And the count follows PostgreSQL's size.
      await service.db.query('VACUUM notes');
      const counted = await bytes('(SELECT sum(bytes) FROM storage_shards)');
      const used = (await onDisk()) - emptySize;
      expect(counted / used, `${counted} counted, ${used} on disk`).toBeGreaterThan(0.6);
      expect(counted / used, `${counted} counted, ${used} on disk`).toBeLessThan(1.6);
    });
  },
);

describe('clients sending hundreds of variants of a header', () => {
  test('hundreds of different Host values change no later verdict of notes8000', async () => {
    const service = await start(notes8000, { edge: loadConfig({}).edge.notes8000 });
    const status = async (host: string) =>
      (await service.request('GET', '/live', { headers: { host } })).status;
    for (let i = 0; i < 150; i++) {
      expect(await status(`localhost:${1000 + i}`)).toBe(200);
      expect(await status(`h${i}.example`)).toBe(400);
    }
    const verdicts = { 'localhost:1000': 200, 'h0.example': 400, 'LOCALHOST:1001': 200 };
    Object.assign(verdicts, { 'h1.example, localhost': 400, 'localhost, h1.example': 200 });
    for (const [host, expected] of Object.entries(verdicts))
      expect(await status(host), host).toBe(expected);
  });

  test('hundreds of Content-Types change nothing in how notes8080 reads later bodies', async () => {
    const service = await start(notes8080, {});
    const post = async (contentType: string, body = '{"title":"x"}') =>
      (await service.request('POST', '/notes', { body, headers: { 'content-type': contentType } }))
        .status;
    const latin1 = 'application/json; charset=iso-8859-1';
    expect(await post(latin1)).toBe(415);
    for (let i = 0; i < 300; i++)
      expect(await post(`application/json; variant=${i}`, '{}')).toBe(400);
    expect([await post(latin1), await post('application/json')]).toEqual([415, 201]);
    const { rows } = await service.db.query('SELECT count(*)::int AS n FROM notes');
    expect(rows).toEqual([{ n: 1 }]);
  });
});
