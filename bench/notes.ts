import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { send } from '../harness/http.js';
import type { ServiceUrls } from '../harness/processes.js';
import { notes8000 } from '../server/notes8000/index.js';
import { notes8080 } from '../server/notes8080/index.js';
import type { AuthConfig, Config } from '../server/shared/config.js';
import type { ServiceDescriptor, NotesDeps } from '../server/shared/service.js';
import { LOGIN_FLOOD_CONNECTIONS, loginLoad } from './auth.js';
import type { HttpLoad, Timing } from './load.js';
import { measureScenario, withOtherPart, type Comparison, type Measurement, type Round } from './scenario.js';
import { databaseLimit, startStatementRecorder, statementsFor, type StatementRecorder, type StatementTemplate } from './statements.js';

export interface NotesService {
  label: 'notes-8080' | 'notes-8000';
  descriptor: ServiceDescriptor<NotesDeps>;
  /** The column (and JSON field) holding a note's text. */
  textField: 'body' | 'content';
}

export const NOTES_SERVICES: NotesService[] = [
  { label: 'notes-8080', descriptor: notes8080, textField: 'body' },
  { label: 'notes-8000', descriptor: notes8000, textField: 'content' },
];

/** One connection per pooled database connection (DB_POOL_MAX's default). */
export const NOTES_CONNECTIONS = 10;
export const LARGE_LIST = 10_000;
export const SMALL_LIST = 100;
/** Few notes, each as large as a request body may be (BODY_LIMIT_BYTES), read by a few clients at once. */
export const BIG_NOTES = 60;
const BIG_NOTE_CHARS = 2 ** 20;
export const BIG_LIST_CONNECTIONS = 4;
/** Readers of one note each beside the login flood. */
export const FLOOD_READERS = 4;

const NOTE_TEXT =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris.';
const note = (service: NotesService, title = 'Benchmark note') => ({ title, [service.textField]: NOTE_TEXT });
const edited = (service: NotesService) => note(service, 'Benchmark note, edited');

export type PreparedNotes = Awaited<ReturnType<typeof prepareNotes>>;

/**
 * An instance's notes table as the rounds use it: a pg Pool on the service's schema (for seeding,
 * and for the database limit) and the ids of the list last laid down in it.
 */
export interface NotesTable {
  service: NotesService;
  pool: pg.Pool;
  ids: number[];
}

/** The table of `service` in the database at `url`, on a pool as large as the server's. */
export function openNotesTable(service: NotesService, url: string, config: Config, onPoolError: (error: Error) => void): NotesTable {
  const pool = new pg.Pool({ connectionString: url, max: config.database.poolMax, options: `-c search_path=${service.descriptor.database!.schema}` });
  // An idle connection the server drops must not end the benchmark. Once ending, the pool has
  // resolved `end()` before its sockets are closed: the server's shutdown may still reach them.
  pool.on('error', (error) => pool.ending || onPoolError(error));
  return { service, pool, ids: [] };
}

/**
 * A notes service ready for its rounds: its table (for seeding and for the database limit) and its
 * statements recorded, each request made for two notes of a fresh table.
 */
export async function prepareNotes(service: NotesService, url: string, config: Config, onPoolError: (error: Error) => void) {
  const { poolMax, timeoutMs } = config.database;
  const table = openNotesTable(service, url, config, onPoolError);
  let recorder: StatementRecorder | undefined;
  const close = async () => {
    await recorder?.close();
    await table.pool.end();
  };
  try {
    recorder = await startStatementRecorder(service.descriptor, url, { poolMax, timeoutMs, notes: config.notes });
    const [a, b] = await resetNotes(table.pool, service, SMALL_LIST);
    const show = await recorder.record('GET', [`/notes/${a}`, `/notes/${b}`]);
    const update = await recorder.record('PUT', [`/notes/${a}`, `/notes/${b}`], edited(service));
    const create = await recorder.record('POST', ['/notes', '/notes'], note(service));
    const remove = await recorder.record('DELETE', [`/notes/${create.created[0]}`, `/notes/${create.created[1]}`]);
    const list = await recordList(recorder);
    const templates = { list, show: show.template, update: update.template, create: create.template, delete: remove.template };
    return {
      service,
      templates,
      round: (round: Round) => notesRound(round, table, templates, recorder!),
      hostileRound: (round: Round) => hostileRound(round, service, table.pool, config.auth),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The list reads in batches: its statements depend on the table's size, so they are recorded on each. */
async function recordList(recorder: StatementRecorder): Promise<StatementTemplate> {
  return (await recorder.record('GET', ['/notes', '/notes'])).template;
}

const serviceUrl = (round: Round, service: NotesService) => round.urls[service.descriptor.name as keyof ServiceUrls];

/** The requests of one run of a load (its address and connections aside); `shortBy`: how many found no seeded note left. */
interface Requests {
  request: Omit<HttpLoad, 'url' | 'connections'>;
  shortBy?: () => number;
}

/** A notes endpoint as the rounds load it on NOTES_CONNECTIONS. */
interface NotesEndpoint {
  scenario: string;
  operation: 'list' | 'show' | 'update' | 'create' | 'delete';
  /**
   * Readies `table` for one run of the endpoint's load and gives its requests: the list lays down
   * exactly SMALL_LIST notes, whose ids the reads and updates then cycle over; each delete gets a
   * note of its own, seeded for more than `rate` req/s could use up.
   */
  ready(table: NotesTable, rate: number, timing: Timing): Promise<Requests>;
}

/** The endpoints each round measures on NOTES_CONNECTIONS, in the order it takes them. */
function notesEndpoints(service: NotesService): NotesEndpoint[] {
  const json = (value: object) => ({ body: JSON.stringify(value), headers: { 'content-type': 'application/json' } });
  return [
    {
      scenario: `GET /notes (${SMALL_LIST} notes)`,
      operation: 'list',
      async ready(table) {
        table.ids = await resetNotes(table.pool, service, SMALL_LIST);
        return { request: { path: '/notes' } };
      },
    },
    { scenario: 'GET /notes/{id}', operation: 'show', ready: async (table) => ({ request: { path: '/notes/{id}', nextId: cycle(table.ids) } }) },
    {
      scenario: 'PUT /notes/{id}',
      operation: 'update',
      ready: async (table) => ({ request: { method: 'PUT', path: '/notes/{id}', ...json(edited(service)), nextId: cycle(table.ids) } }),
    },
    { scenario: 'POST /notes', operation: 'create', ready: async () => ({ request: { method: 'POST', path: '/notes', ...json(note(service)) } }) },
    {
      scenario: 'DELETE /notes/{id}',
      operation: 'delete',
      async ready(table, rate, timing) {
        const victims = once(await addNotes(table.pool, service, Math.ceil(2 * rate * (timing.warmupSeconds + timing.seconds)) + 1000));
        return { request: { method: 'DELETE', path: '/notes/{id}', nextId: victims.next }, shortBy: victims.shortBy };
      },
    },
  ];
}

/** Says on `measured` when the requests of its run (`what`) ran out of seeded notes. */
function noteShortage(measured: Measurement, what: string, { shortBy }: Requests): void {
  const short = shortBy?.() ?? 0;
  if (short > 0) measured.warnings.push(`${what} run ran out of seeded notes (${short} requests)`);
}

/**
 * One round of a notes service: each endpoint under load, each followed by its database limit
 * (the same statements through the pool, same concurrency) on the same data.
 */
async function notesRound(round: Round, table: NotesTable, templates: Record<'show' | 'update' | 'create' | 'delete', StatementTemplate>, recorder: StatementRecorder): Promise<Measurement[]> {
  const { service } = table;
  const url = serviceUrl(round, service);
  const results: Measurement[] = [];
  let fastest = 0;
  const run = async (scenario: string, template: StatementTemplate, connections: number, http: Requests, database: Requests) => {
    const measured = await measureScenario(round, { service: service.label, scenario, load: { url, ...http.request, connections } });
    const limit = await databaseLimit(table.pool, () => statementsFor(template, database.request.nextId?.()), connections, round.timing);
    fastest = Math.max(fastest, measured.load.requestsPerSecond, limit.requestsPerSecond);
    const result = withOtherPart(measured, 'database', limit);
    noteShortage(result, 'HTTP', http);
    noteShortage(result, 'database', database);
    results.push(result);
    return result;
  };
  const responseBytes = async () => (await send(url, { method: 'GET', path: '/notes' })).body.length;

  for (const endpoint of notesEndpoints(service)) {
    // The database limit's requests are readied like the HTTP run's (for deletes: notes of their own).
    const http = await endpoint.ready(table, fastest, round.timing);
    const database = await endpoint.ready(table, fastest, round.timing);
    const template = endpoint.operation === 'list' ? await recordList(recorder) : templates[endpoint.operation];
    const measured = await run(endpoint.scenario, template, NOTES_CONNECTIONS, http, database);
    if (endpoint.operation === 'list') measured.responseBytes = await responseBytes();
  }

  await resetNotes(table.pool, service, LARGE_LIST);
  const list = { request: { path: '/notes' } };
  const large = await run(`GET /notes (${LARGE_LIST.toLocaleString('en')} notes)`, await recordList(recorder), 1, list, list);
  large.responseBytes = await responseBytes();
  return results;
}

/** One instance's side of a comparison of a notes service: where it answers (its round), its table, and what sets it apart. */
export interface NotesSide {
  variant: string;
  round: Round;
  table: NotesTable;
}

/**
 * A comparison of two instances of a notes service: each endpoint's load of the round, readied
 * alike on both tables (the same list, the same notes to read and update, notes of their own to
 * delete), sent to `baseline` and then to `compared` back to back, with no limit beside them.
 */
export async function comparedNotesRound(baseline: NotesSide, compared: NotesSide): Promise<Measurement[]> {
  const { service } = baseline.table;
  const results: Measurement[] = [];
  let fastest = 0;
  const measure = async (side: NotesSide, scenario: string, requests: Requests, against?: Comparison['against']) => {
    const load = { url: serviceUrl(side.round, service), ...requests.request, connections: NOTES_CONNECTIONS };
    const measured = await measureScenario(side.round, { service: service.label, scenario, load, limit: 'none', comparison: { variant: side.variant, against } });
    noteShortage(measured, side.variant, requests);
    fastest = Math.max(fastest, measured.load.requestsPerSecond);
    results.push(measured);
    return measured;
  };
  for (const endpoint of notesEndpoints(service)) {
    const ready = [await endpoint.ready(baseline.table, fastest, baseline.round.timing), await endpoint.ready(compared.table, fastest, compared.round.timing)] as const;
    const { id } = await measure(baseline, endpoint.scenario, ready[0]);
    await measure(compared, endpoint.scenario, ready[1], { id, variant: baseline.variant });
  }
  return results;
}

/**
 * A notes service under hostile load, measured without a limit beside it: the list of notes as
 * large as a request body may be, read by several clients at once (req/s and memory), and reads of
 * one note while a login flood keeps the password checks busy (latency).
 */
async function hostileRound(round: Round, service: NotesService, pool: pg.Pool, auth: AuthConfig): Promise<Measurement[]> {
  const url = serviceUrl(round, service);
  await resetBigNotes(pool, service, BIG_NOTES);
  // A request reads 60 MiB: a one-second run would see none of them end.
  const timing = { ...round.timing, seconds: Math.max(round.timing.seconds, 4) };
  const load = { url, path: '/notes', connections: BIG_LIST_CONNECTIONS };
  const big = await measureScenario({ ...round, timing }, { service: service.label, scenario: `GET /notes (${BIG_NOTES} notes of 1 MiB)`, load, limit: 'none' });
  big.responseBytes = (await send(url, { method: 'GET', path: '/notes', timeoutMs: 120_000 })).body.length;

  // A login flood keeps libuv's threads busy with password checks and the event loop with logins:
  // the reads beside it show what that costs a note.
  const ids = await resetNotes(pool, service, SMALL_LIST);
  const admin = auth.accounts.find((account) => account.role === 'admin')!;
  const flood = loginLoad(round.urls.auth, admin, LOGIN_FLOOD_CONNECTIONS);
  const readers = { url, path: '/notes/{id}', nextId: cycle(ids), connections: FLOOD_READERS };
  const scenario = `GET /notes/{id} during logins (${LOGIN_FLOOD_CONNECTIONS} login connections)`;
  const duringLogins = await measureScenario(round, { service: service.label, scenario, load: readers, limit: 'none', alongside: flood });
  await pool.query('TRUNCATE notes RESTART IDENTITY');
  return [big, duringLogins];
}

/** 8000's health check: a route that only answers, held to Koa alone. */
export async function healthRound(round: Round): Promise<Measurement[]> {
  const load = { url: round.urls.notes8000, path: '/health', connections: NOTES_CONNECTIONS };
  return [await measureScenario(round, { service: 'notes-8000', scenario: 'GET /health', load, limit: 'koa' })];
}

/** Empties the table and fills it with `count` notes; their ids, ascending. */
async function resetNotes(pool: pg.Pool, service: NotesService, count: number): Promise<number[]> {
  await pool.query('TRUNCATE notes RESTART IDENTITY');
  return addNotes(pool, service, count);
}

/** Empties the table and fills it with `count` notes of 1 MiB of random base64 each, which no compression shrinks. */
async function resetBigNotes(pool: pg.Pool, service: NotesService, count: number): Promise<void> {
  await pool.query('TRUNCATE notes RESTART IDENTITY');
  for (let i = 1; i <= count; i++) {
    await pool.query(`INSERT INTO notes (title, ${service.textField}) VALUES ($1, $2)`, [`Big note ${i}`, randomBytes((BIG_NOTE_CHARS * 3) / 4).toString('base64')]);
  }
}

/** Timestamps come from the columns' defaults, as for a note created through the API. */
async function addNotes(pool: pg.Pool, service: NotesService, count: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO notes (title, ${service.textField}) SELECT 'Seeded note ' || i, $1 FROM generate_series(1, $2::int) AS i RETURNING id`,
    [NOTE_TEXT, count],
  );
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

/** Ids handed out in turn, over and over. */
function cycle(ids: number[]): () => number {
  let next = 0;
  return () => ids[next++ % ids.length]!;
}

/** Ids handed out once each (for deletes); counts the requests that found none left. */
function once(ids: number[]): { next(): number; shortBy(): number } {
  let next = 0;
  return { next: () => ids[Math.min(next++, ids.length - 1)]!, shortBy: () => Math.max(0, next - ids.length) };
}
