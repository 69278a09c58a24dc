import { describe, expect, it } from 'vitest';
import { loadConfig } from '../server/config.js';
import { NOTES_SERVICES } from './support/notesServices.js';
import { startTestService } from './support/services.js';

// Ids that do not run out: bigint ids (and versions), JSON numbers up to 2^53 - 1.

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
});
