import { describe, expect, test } from 'vitest';
import { notes8000 } from '../../server/services.js';
import { deps, SCHEMA } from '../support/notes8000.js';
import { unreachableDatabase } from '../support/serviceDatabase.js';
import { startTestService } from '../support/services.js';

describe('notes8000 when the store fails', () => {
  test(
    'a database that refuses connections gives 500 {detail} ' +
      'within the pool timeout, logged once; /health still answers',
    async () => {
      const timeoutMs = 1_000;
      const { db, port } = await unreachableDatabase(SCHEMA, timeoutMs);
      const broken = await startTestService(notes8000, { db, deps });
      try {
        const list = await broken.request('GET', '/notes');
        expect(list).toMatchObject({ status: 500, json: { detail: 'database unavailable' } });
        const create = await broken.request('POST', '/notes', {
          json: { title: 'x', content: 'y' },
        });
        expect(create).toMatchObject({ status: 500, json: { detail: 'database unavailable' } });
        expect(create.text).not.toContain(String(port));
        // A wait for a connection, then one for the statement: each bounded by the timeout.
        for (const answer of [list, create]) expect(answer.ms).toBeLessThan(2 * timeoutMs + 1_000);

        expect(await broken.request('GET', '/health')).toMatchObject({
          status: 200,
          json: { status: 'healthy' },
        });
        // Input is still validated without the store.
        expect((await broken.request('POST', '/notes', { json: {} })).status).toBe(422);

        expect(broken.logs.errors()).toHaveLength(2);
      } finally {
        await broken.close();
        await db.close();
      }
    },
  );
});
