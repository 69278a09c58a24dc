import { describe, expect, it } from 'vitest';
import { notes8080 } from '../../server/services.js';
import { startTcpRelay } from '../../harness/tcpRelay.js';
import { createOn, deps, type Options, type Service } from '../support/notes8080.js';
import { serviceDatabase, unreachableDatabase } from '../support/serviceDatabase.js';
import { startTestService } from '../support/services.js';

describe('notes8080 service when the store fails', () => {
  it(
    'answers every operation with 500 {error} within the ' +
      'pool timeout, logging each failure once with its error',
    async () => {
      const timeoutMs = 1_000;
      const { db } = await unreachableDatabase(notes8080.database!.schema, timeoutMs);
      const service = await startTestService(notes8080, { db, deps });
      try {
        const operations: [string, string, Options?][] = [
          ['POST', '/notes', { json: { title: 'x' } }],
          ['GET', '/notes'],
          ['GET', '/notes/1'],
          ['PUT', '/notes/1', { json: { title: 'x' } }],
          ['DELETE', '/notes/1'],
        ];
        for (const [method, path, options] of operations) {
          service.logs.clear();
          const response = await service.request(method, path, options);
          expect(response.status, `${method} ${path}`).toBe(500);
          expect(response.json).toEqual({ error: 'database unavailable' });
          // A wait for a connection, then one for the statement: each bounded by the timeout.
          expect(response.ms, `${method} ${path}`).toBeLessThan(2 * timeoutMs + 1_000);
          expect(service.logs.errors()).toEqual([
            expect.objectContaining({
              err: expect.objectContaining({ message: expect.any(String) }),
            }),
          ]);
        }
      } finally {
        await service.close();
        await db.close();
      }
    },
    20_000,
  );

  it('cuts a streamed list short (never hangs) if the database fails midway; logs it', async () => {
    const database = await serviceDatabase(notes8080);
    let service: Service | undefined;
    try {
      await database.migrate();
      const db = database.connect();
      service = await startTestService(notes8080, { db, deps });
      // About 13 MB of JSON: far more than the socket buffers hold while the client waits.
      await db.query(
        `INSERT INTO notes (title, body)
          SELECT 'note ' || i, repeat('x', 200) FROM generate_series(1, 50000) AS i`,
      );
      // fetch rather than service.request: the answer must stay unread while the store fails,
      // and an answer cut short has no body to check against the contract.
      const response = await fetch(`${service.url}/notes`);
      // The body stays unread: should the first batch fail, the failure the service logged says
      // why.
      expect(response.status, JSON.stringify(service.logs.errors())).toBe(200);
      await db.query('ALTER TABLE notes RENAME TO notes_gone');
      await expect(response.text()).rejects.toThrow();
      expect(service.logs.errors()).toEqual([expect.objectContaining({ msg: 'answer cut short' })]);
    } finally {
      await service?.close();
      await database.drop();
    }
  }, 20_000);

  it('serves again by itself once the database is back', async () => {
    const database = await serviceDatabase(notes8080);
    const target = new URL(database.url);
    const relay = await startTcpRelay({ host: target.hostname, port: Number(target.port) });
    let service: Service | undefined;
    try {
      await database.migrate();
      service = await startTestService(notes8080, {
        db: database.connect(relay.through(database.url)),
        deps,
      });
      const note = await createOn(service, { title: 'before the outage' });

      relay.cut();
      const during = await service.request('GET', `/notes/${note.id}`);
      expect(during.status).toBe(500);
      expect(during.json).toEqual({ error: 'database unavailable' });

      relay.restore();
      const after = await service.request('GET', `/notes/${note.id}`);
      expect(after.status).toBe(200);
      expect(after.json).toEqual(note);
    } finally {
      await service?.close();
      await relay.close();
      await database.drop();
    }
  }, 20_000);
});
