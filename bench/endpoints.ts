import pg from 'pg';
import type { ServiceUrls } from '../harness/processes.js';
import type { Load, Timing } from './load.js';
import type { Side } from './sides.js';

/** The endpoints measured on every side: the same requests, each side's table readied alike. */

/** A notes table: a pool on its schema, its text column, the ids of the notes last listed. */
interface Table {
  pool: pg.Pool;
  textField: 'body' | 'content';
  ids: number[];
}

type NotesService = 'notes8080' | 'notes8000';

/** A side in a round: where it answers, and its notes tables by service. */
export interface RoundSide extends Side {
  tables: Record<NotesService, Table>;
  /** Its fastest note reads so far in this round (req/s): how many notes its deletes may take. */
  fastest: number;
}

/** A row: its req/s at least `target` times the plain Koa peer's; `load` readies the table. */
export interface Endpoint {
  id: string;
  service: keyof ServiceUrls;
  target: number;
  load: Loader;
}
type Loader = (side: RoundSide, timing: Timing) => Promise<Omit<Load, 'url'>>;

export const LIST = 100;
// ASCII only: the load's script carries it as it is (bench/load.ts).
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.';

/** The project's tables, or the peer's one table, in the 8080 shape, for both services' rows. */
export function openTables(side: Side, databaseUrl: string): Record<NotesService, Table> {
  const open = (schema: string, textField: Table['textField']): Table => {
    const options = `-c search_path=${schema}`;
    const pool = new pg.Pool({ connectionString: databaseUrl, options });
    // A connection the server drops when the round ends must not end the benchmark.
    pool.on('error', () => undefined);
    return { pool, textField, ids: [] };
  };
  if (side.name === 'project')
    return { notes8080: open('notes8080', 'body'), notes8000: open('notes8000', 'content') };
  const table = open(side.name === 'Koa' ? 'koa_peer' : 'fastify_peer', 'body');
  return { notes8080: table, notes8000: table };
}

export const closeTables = (tables: Record<NotesService, Table>) =>
  Promise.all([...new Set(Object.values(tables))].map((table) => table.pool.end()));

/** Adds `count` notes in one statement; their ids, which follow one another. */
async function addNotes({ pool, textField }: Table, count: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO notes (title, ${textField})
      SELECT 'Seeded note ' || i, $1 FROM generate_series(1, $2::int) AS i RETURNING id`,
    [TEXT, count],
  );
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}

const row = (service: Endpoint['service'], name: string, target: number, load: Loader) =>
  ({ id: `${service} ${name}`, service, target, load }) satisfies Endpoint;

function notesEndpoints(service: NotesService): Endpoint[] {
  const notes = (name: string, load: Loader) => row(service, name, 1, load);
  const table = (side: RoundSide) => side.tables[service];
  const write = (side: RoundSide, method: 'PUT' | 'POST', title: string) => ({
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title, [table(side).textField]: TEXT }),
  });
  return [
    notes(`GET /notes (${LIST} notes)`, async (side) => {
      // Row by row: the project's storage count follows a DELETE, not a TRUNCATE.
      await table(side).pool.query('DELETE FROM notes');
      table(side).ids = await addNotes(table(side), LIST);
      return { path: '/notes' };
    }),
    notes('GET /notes/{id}', async (side) => ({
      path: '/notes/{id}',
      ids: { cycle: table(side).ids },
    })),
    notes('PUT /notes/{id}', async (side) => ({
      ...write(side, 'PUT', 'Edited note'),
      path: '/notes/{id}',
      ids: { cycle: table(side).ids },
    })),
    notes('POST /notes', async (side) => ({ ...write(side, 'POST', 'New note'), path: '/notes' })),
    notes('DELETE /notes/{id}', async (side, { warmupSeconds, seconds }) => {
      // A note of its own for each delete: half again as many as reads at its rate would take.
      const count = Math.ceil(1.5 * side.fastest * (warmupSeconds + seconds)) + 500;
      const ids = await addNotes(table(side), count);
      return { method: 'DELETE', path: '/notes/{id}', ids: { next: ids[0]!, last: ids.at(-1)! } };
    }),
  ];
}

/** Every row of the report, in the order each round measures them. */
export const ENDPOINTS: Endpoint[] = [
  row('notes8000', 'GET /health', 0.9, async () => ({ path: '/health' })),
  row('auth', 'GET /api/me', 0.9, async ({ cookie }) => ({ path: '/api/me', headers: { cookie } })),
  ...notesEndpoints('notes8080'),
  ...notesEndpoints('notes8000'),
];

/** The requests of the endpoint `id` on `side`, its table readied for them. */
export async function loadOn(side: RoundSide, id: string, timing: Timing): Promise<Load> {
  const endpoint = ENDPOINTS.find((candidate) => candidate.id === id)!;
  return { url: side.urls[endpoint.service], ...(await endpoint.load(side, timing)) };
}
