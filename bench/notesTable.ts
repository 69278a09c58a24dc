import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A notes table as the rounds ready it: a pg Pool on its schema, the shape of its notes, and the
 * ids of the list last laid down in it.
 */
export interface NotesTable {
  pool: pg.Pool;
  /** The column (and JSON field) holding a note's text. */
  textField: 'body' | 'content';
  ids: number[];
}

const NOTE_TEXT =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do ' +
  'eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut ' +
  'enim ad minim veniam, quis nostrud exercitation ullamco laboris.';
const BIG_NOTE_CHARS = 2 ** 20;

/** A note's request body in the table's shape. */
export const noteBody = ({ textField }: NotesTable, title = 'Benchmark note') => ({
  title,
  [textField]: NOTE_TEXT,
});

/**
 * The table in `schema` of the database at `url`, on a pool of `poolMax`, as large as the server's.
 */
export function openNotesTable(
  { schema, textField }: { schema: string; textField: NotesTable['textField'] },
  { url, poolMax }: { url: string; poolMax: number },
  onPoolError: (error: Error) => void,
): NotesTable {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    options: `-c search_path=${schema}`,
  });
  // An idle connection the server drops must not end the benchmark. Once ending, the pool has
  // resolved `end()` before its sockets are closed: the server's shutdown may still reach them.
  pool.on('error', (error) => pool.ending || onPoolError(error));
  return { pool, textField, ids: [] };
}

/** Empties the table and fills it with `count` notes; their ids, ascending. */
export async function resetNotes(table: NotesTable, count: number): Promise<number[]> {
  await emptyNotes(table);
  return addNotes(table, count);
}

export async function emptyNotes({ pool }: NotesTable): Promise<void> {
  await pool.query('TRUNCATE notes RESTART IDENTITY');
}

/**
 * Empties the table and fills it with `count` notes of 1 MiB of random base64 each, which no
 * compression shrinks.
 */
export async function resetBigNotes(table: NotesTable, count: number): Promise<void> {
  await emptyNotes(table);
  for (let i = 1; i <= count; i++) {
    await table.pool.query(`INSERT INTO notes (title, ${table.textField}) VALUES ($1, $2)`, [
      `Big note ${i}`,
      randomBytes((BIG_NOTE_CHARS * 3) / 4).toString('base64'),
    ]);
  }
}

/** Timestamps come from the columns' defaults, as for a note created through the API. */
export async function addNotes({ pool, textField }: NotesTable, count: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: string | number }>(
    `INSERT INTO notes (title, ${textField})
      SELECT 'Seeded note ' || i, $1 FROM generate_series(1, $2::int) AS i RETURNING id`,
    [NOTE_TEXT, count],
  );
  // pg reads a bigint id (the services' tables) as text: the deletes' ids are counted from the
  // first.
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}
