import { describe, expect, test } from 'vitest';
import { notes8000 } from '../../server/services.js';
import { deps, SCHEMA, type Note, type Service } from '../support/notes8000.js';
import { notesColumns, serviceDatabase, type ServiceDatabase } from '../support/serviceDatabase.js';
import { startTestService } from '../support/services.js';

describe('notes8000 start-up migrations', () => {
  async function withFreshDatabase(work: (database: ServiceDatabase) => Promise<void>) {
    const database = await serviceDatabase(notes8000);
    try {
      await work(database);
    } finally {
      await database.drop();
    }
  }

  /** The service on `database`'s pool, for `work`, closed afterwards. */
  async function withService(database: ServiceDatabase, work: (service: Service) => Promise<void>) {
    const started = await startTestService(notes8000, { db: database.connect(), deps });
    try {
      await work(started);
    } finally {
      await started.close();
    }
  }

  const NOW = expect.stringMatching(/^(now\(\)|CURRENT_TIMESTAMP)$/);

  test('creates the notes table in its own schema on an empty database', async () => {
    await withFreshDatabase(async (database) => {
      await database.migrate();
      expect(await notesColumns(database.connect(), SCHEMA)).toMatchObject([
        {
          column_name: 'id',
          data_type: 'bigint',
          is_nullable: 'NO',
          column_default: expect.stringContaining('nextval'),
        },
        {
          column_name: 'title',
          data_type: 'character varying',
          character_maximum_length: 100,
          is_nullable: 'NO',
        },
        { column_name: 'content', data_type: 'text', is_nullable: 'NO' },
        {
          column_name: 'created_at',
          data_type: 'timestamp with time zone',
          is_nullable: 'NO',
          column_default: NOW,
          datetime_precision: 6,
        },
        {
          column_name: 'updated_at',
          data_type: 'timestamp with time zone',
          is_nullable: 'NO',
          column_default: NOW,
          datetime_precision: 6,
        },
        { column_name: 'version', data_type: 'bigint', is_nullable: 'NO', column_default: '1' },
      ]);
      await withService(database, async (fresh) => {
        expect(
          (await fresh.request('POST', '/notes', { json: { title: 't', content: 'c' } })).status,
        ).toBe(201);
      });
    });
  });

  test('running twice changes nothing and keeps the notes', async () => {
    await withFreshDatabase(async (database) => {
      const db = database.connect();
      await database.migrate();
      await db.query(`INSERT INTO notes (title, content) VALUES ('kept', 'across start-ups')`);
      const before = await notesColumns(db, SCHEMA);
      await database.migrate();
      expect(await notesColumns(db, SCHEMA)).toEqual(before);
      expect((await db.query('SELECT title, content FROM notes')).rows).toEqual([
        { title: 'kept', content: 'across start-ups' },
      ]);
    });
  });

  test('keeps an existing notes table with its rows, and refreshes updated_at on it', async () => {
    await withFreshDatabase(async (database) => {
      const db = database.connect();
      await db.query(`CREATE SCHEMA ${SCHEMA}`);
      await db.query(`CREATE TABLE ${SCHEMA}.notes (
        id serial PRIMARY KEY, title varchar(100) NOT NULL, content text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now())`);
      await db.query(
        `INSERT INTO ${SCHEMA}.notes (title, content, updated_at)
          VALUES ('old', 'row', '2020-01-01')`,
      );
      await database.migrate();
      await withService(database, async (started) => {
        const updated = await started.request('PUT', '/notes/1', { json: { title: 'new' } });
        expect(updated.json).toMatchObject({ id: 1, title: 'new', content: 'row' });
        expect((updated.json as Note).updated_at.startsWith('2020')).toBe(false);
      });
    });
  });
});
