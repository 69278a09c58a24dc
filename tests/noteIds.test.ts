import { describe, expect, it } from 'vitest';
import { loadConfig } from '../server/shared/config.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { migrateBefore, serviceDatabase } from './support/serviceDatabase.js';
import { startTestService } from './support/services.js';

// Ids that do not run out: bigint ids (and versions), JSON numbers up to 2^53 - 1, and a migration
// that keeps every row and the sequence's place.

const VERSIONS = '20261125000000_versions.ts';

describe.each(NOTES_SERVICES)('$name: ids', ({ descriptor, note }) => {
  it('creates, reads, updates and deletes notes past id 2^31', async () => {
    const service = await startTestService(descriptor, { deps: { config: loadConfig({}).notes } });
    try {
      await service.db.query("SELECT setval(pg_get_serial_sequence('notes', 'id'), 2147483647)");
      const created = await service.request('POST', '/notes', { json: note('past 2^31') });
      expect(created.status).toBe(201);
      const { id } = created.json as { id: number };
      expect(id).toBe(2 ** 31);
      expect((await service.request('GET', `/notes/${id}`)).json).toEqual(created.json);
      expect(
        (await service.request('PUT', `/notes/${id}`, { json: note('past 2^31, edited') })).status,
      ).toBe(200);
      // Its version, raised by every change, does not run out either.
      await service.db.query('UPDATE notes SET version = 2147483647 WHERE id = $1', [id]);
      const edited = await service.request('PUT', `/notes/${id}`, {
        json: note('past version 2^31'),
        headers: { 'if-match': '"2147483647"' },
      });
      expect(edited.status).toBe(200);
      expect(edited.headers.etag).toBe('"2147483648"');
      expect((await service.request('DELETE', `/notes/${id}`)).status).toBeLessThan(300);
      expect((await service.request('GET', `/notes/${2 ** 53}`)).status).toBe(404);
    } finally {
      await service.close();
    }
  });

  it("migrates a table filled by the previous schema: every row, id and the sequence's place kept", async () => {
    const database = await serviceDatabase(descriptor);
    try {
      const { migrations } = descriptor.database!;
      await migrateBefore(database.url, database.schema, migrations, VERSIONS);
      const db = database.connect();
      expect(
        (
          await db.query(
            "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'notes' AND column_name = 'id'",
            [database.schema],
          )
        ).rows,
      ).toEqual([{ data_type: 'integer' }]);
      const text = Object.keys(note('x')).find((key) => key !== 'title')!;
      await db.query(
        `INSERT INTO notes (title, ${text}) VALUES ('one', 'a'), ('two', 'b'), ('three', 'c')`,
      );
      await db.query("SELECT setval(pg_get_serial_sequence('notes', 'id'), 1000)");
      await db.query('DELETE FROM notes WHERE title = $1', ['two']);
      const before = (
        await db.query(`SELECT id, title, ${text} AS text, created_at FROM notes ORDER BY id`)
      ).rows;

      await database.migrate();
      const after = (
        await db.query(
          `SELECT id, title, ${text} AS text, created_at, version FROM notes ORDER BY id`,
        )
      ).rows;
      expect(after).toEqual(before.map((row) => ({ ...row, id: String(row.id), version: '1' })));
      const service = await startTestService(descriptor, {
        db,
        deps: { config: loadConfig({}).notes },
      });
      try {
        expect(
          (
            (await service.request('POST', '/notes', { json: note('after the migration') }))
              .json as { id: number }
          ).id,
        ).toBe(1001);
        expect(
          ((await service.request('GET', '/notes')).json as { id: number }[]).map(
            (item) => item.id,
          ),
        ).toEqual([1001, 3, 1]);
      } finally {
        await service.close();
      }
    } finally {
      await database.drop();
    }
  });
});
