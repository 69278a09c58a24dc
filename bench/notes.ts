import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { send } from '../harness/http.js';
import type { ServiceUrls } from '../harness/processes.js';
import { notes8000 } from '../server/notes8000/index.js';
import { notes8080 } from '../server/notes8080/index.js';
import type { AuthConfig, Config } from '../server/shared/config.js';
import type { ServiceDescriptor, NotesDeps } from '../server/shared/service.js';
import { LOGIN_FLOOD_CONNECTIONS, loginLoad } from './auth.js';
import { measureScenario, withOtherPart, type Measurement, type Round } from './scenario.js';
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
const SMALL_LIST = 100;
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
 * A notes service ready for its rounds: a pg Pool on its schema (for seeding and for the database
 * limit) and its statements recorded, each request made for two notes of a fresh table.
 */
export async function prepareNotes(service: NotesService, url: string, config: Config, onPoolError: (error: Error) => void) {
  const { poolMax, timeoutMs } = config.database;
  const pool = new pg.Pool({ connectionString: url, max: poolMax, options: `-c search_path=${service.descriptor.database!.schema}` });
  // An idle connection the server drops must not end the benchmark. Once ending, the pool has
  // resolved `end()` before its sockets are closed: the server's shutdown may still reach them.
  pool.on('error', (error) => pool.ending || onPoolError(error));
  let recorder: StatementRecorder | undefined;
  const close = async () => {
    await recorder?.close();
    await pool.end();
  };
  try {
    recorder = await startStatementRecorder(service.descriptor, url, { poolMax, timeoutMs, notes: config.notes });
    const [a, b] = await resetNotes(pool, service, SMALL_LIST);
    const show = await recorder.record('GET', [`/notes/${a}`, `/notes/${b}`]);
    const update = await recorder.record('PUT', [`/notes/${a}`, `/notes/${b}`], edited(service));
    const create = await recorder.record('POST', ['/notes', '/notes'], note(service));
    const remove = await recorder.record('DELETE', [`/notes/${create.created[0]}`, `/notes/${create.created[1]}`]);
    const list = await recordList(recorder);
    const templates = { list, show: show.template, update: update.template, create: create.template, delete: remove.template };
    return {
      service,
      templates,
      round: (round: Round) => notesRound(round, service, pool, templates, recorder!),
      hostileRound: (round: Round) => hostileRound(round, service, pool, config.auth),
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

/**
 * One round of a notes service: each endpoint under load, each followed by its database limit
 * (the same statements through the pool, same concurrency) on the same data.
 */
async function notesRound(round: Round, service: NotesService, pool: pg.Pool, templates: Record<'show' | 'update' | 'create' | 'delete', StatementTemplate>, recorder: StatementRecorder): Promise<Measurement[]> {
  const url = round.urls[service.descriptor.name as keyof ServiceUrls];
  const results: Measurement[] = [];
  let fastest = 0;
  const run = async (
    scenario: string,
    template: StatementTemplate,
    connections: number,
    http: { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; json?: object; path: string; nextId?: () => number },
    nextDatabaseId = http.nextId,
  ) => {
    const { json, ...request } = http;
    const body = json && JSON.stringify(json);
    const load = { url, ...request, body, headers: body ? { 'content-type': 'application/json' } : undefined, connections };
    const measured = await measureScenario(round, { service: service.label, scenario, load });
    const database = await databaseLimit(pool, () => statementsFor(template, nextDatabaseId?.()), connections, round.timing);
    fastest = Math.max(fastest, measured.load.requestsPerSecond, database.requestsPerSecond);
    results.push(withOtherPart(measured, 'database', database));
    return results.at(-1)!;
  };
  const responseBytes = async () => (await send(url, { method: 'GET', path: '/notes' })).body.length;

  const ids = await resetNotes(pool, service, SMALL_LIST);
  const list = await run(`GET /notes (${SMALL_LIST} notes)`, await recordList(recorder), NOTES_CONNECTIONS, { path: '/notes' });
  list.responseBytes = await responseBytes();
  await run('GET /notes/{id}', templates.show, NOTES_CONNECTIONS, { path: '/notes/{id}', nextId: cycle(ids) });
  await run('PUT /notes/{id}', templates.update, NOTES_CONNECTIONS, { method: 'PUT', path: '/notes/{id}', json: edited(service), nextId: cycle(ids) });
  await run('POST /notes', templates.create, NOTES_CONNECTIONS, { method: 'POST', path: '/notes', json: note(service) });

  // Each delete needs a note of its own: seed more than the fastest rate seen could use up.
  const enough = Math.ceil(2 * fastest * (round.timing.warmupSeconds + round.timing.seconds)) + 1000;
  const httpVictims = once(await addNotes(pool, service, enough));
  const databaseVictims = once(await addNotes(pool, service, enough));
  const deleteHttp = { method: 'DELETE', path: '/notes/{id}', nextId: httpVictims.next } as const;
  const removed = await run('DELETE /notes/{id}', templates.delete, NOTES_CONNECTIONS, deleteHttp, databaseVictims.next);
  for (const [what, victims] of [['HTTP', httpVictims], ['database', databaseVictims]] as const) {
    if (victims.shortBy() > 0) removed.warnings.push(`${what} run ran out of seeded notes (${victims.shortBy()} requests)`);
  }

  await resetNotes(pool, service, LARGE_LIST);
  const large = await run(`GET /notes (${LARGE_LIST.toLocaleString('en')} notes)`, await recordList(recorder), 1, { path: '/notes' });
  large.responseBytes = await responseBytes();
  return results;
}

/**
 * A notes service under hostile load, measured without a limit beside it: the list of notes as
 * large as a request body may be, read by several clients at once (req/s and memory), and reads of
 * one note while a login flood keeps the password checks busy (latency).
 */
async function hostileRound(round: Round, service: NotesService, pool: pg.Pool, auth: AuthConfig): Promise<Measurement[]> {
  const url = round.urls[service.descriptor.name as keyof ServiceUrls];
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
