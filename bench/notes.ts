import { send } from '../harness/http.js';
import type { ServiceUrls } from '../harness/processes.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import type { AuthConfig } from '../server/config.js';
import type { NotesDeps, Service } from '../server/services.js';
import { LOGIN_CONNECTIONS, loginLoad } from './auth.js';
import type { Timing } from './load.js';
import {
  addNotes,
  emptyNotes,
  noteBody,
  openNotesTable,
  resetBigNotes,
  resetNotes,
  type NotesTable,
} from './notesTable.js';
import { measureScenario, type Measurement, type Round } from './scenario.js';
import { againstPeer, type Requests, type Side, type SideRun } from './sides.js';
import { SeededIds } from './wrkScript.js';

export interface NotesService {
  label: 'notes-8080' | 'notes-8000';
  descriptor: Service<NotesDeps>;
  textField: NotesTable['textField'];
}

export const NOTES_SERVICES: NotesService[] = [
  { label: 'notes-8080', descriptor: notes8080, textField: 'body' },
  { label: 'notes-8000', descriptor: notes8000, textField: 'content' },
];

/** The peer's notes: the 8080 spec's shape, in a schema of its own (bench/peer.ts). */
export const PEER_NOTES = { schema: 'peer', textField: 'body' } as const;

export const LARGE_LIST = 10_000;
export const SMALL_LIST = 100;
/**
 * Few notes, each as large as a request body may be (BODY_LIMIT_BYTES), read by a few clients at
 * once.
 */
export const BIG_NOTES = 60;
export const BIG_LIST_CONNECTIONS = 4;
/** Readers of one note each beside the logins. */
export const LOGIN_READERS = 4;

/** The table of `service` in the database at `url`, on a pool as large as the server's. */
export function openServiceTable(
  service: NotesService,
  database: { url: string; poolMax: number },
  onPoolError: (error: Error) => void,
): NotesTable {
  return openNotesTable(
    { schema: service.descriptor.database!.schema, textField: service.textField },
    database,
    onPoolError,
  );
}

/** A side whose notes endpoints are readied on `table`. */
export interface NotesSide extends Side {
  table: NotesTable;
}

/** Where an instance's process answers for `service`. */
const serviceUrl = (urls: ServiceUrls, service: NotesService) =>
  urls[service.descriptor.name as keyof ServiceUrls];

/** A notes endpoint as the rounds load it, on both sides of a pair. */
interface NotesEndpoint {
  scenario: string;
  /**
   * Readies `table` for one run of the endpoint's load and gives its requests, in the table's
   * shape: the list lays down exactly SMALL_LIST notes, whose ids the reads and updates then cycle
   * over; each delete gets a note of its own, seeded for more than `rate` req/s could use up.
   */
  ready(table: NotesTable, rate: number, timing: Timing): Promise<Requests>;
}

const json = (value: object) => ({
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
});

const LIST_SCENARIO = `GET /notes (${SMALL_LIST} notes)`;

/** The endpoints each round measures on two sides, in the order it takes them. */
const NOTES_ENDPOINTS: NotesEndpoint[] = [
  {
    scenario: LIST_SCENARIO,
    async ready(table) {
      table.ids = await resetNotes(table, SMALL_LIST);
      return { path: '/notes' };
    },
  },
  {
    scenario: 'GET /notes/{id}',
    ready: async (table) => ({ path: '/notes/{id}', ids: { cycle: table.ids } }),
  },
  {
    scenario: 'PUT /notes/{id}',
    ready: async (table) => ({
      method: 'PUT',
      path: '/notes/{id}',
      ...json(noteBody(table, 'Benchmark note, edited')),
      ids: { cycle: table.ids },
    }),
  },
  {
    scenario: 'POST /notes',
    ready: async (table) => ({ method: 'POST', path: '/notes', ...json(noteBody(table)) }),
  },
  {
    scenario: 'DELETE /notes/{id}',
    async ready(table, rate, timing) {
      const seeded = await addNotes(
        table,
        Math.ceil(2 * rate * (timing.warmupSeconds + timing.seconds)) + 1000,
      );
      return { method: 'DELETE', path: '/notes/{id}', ids: SeededIds.of(seeded) };
    },
  },
];

/**
 * Each endpoint's runs on both sides, readied alike on each side's table, in the order of
 * NOTES_ENDPOINTS; `measure` measures one endpoint's pair.
 */
async function eachEndpoint(
  round: Round,
  sides: [NotesSide, NotesSide],
  measure: (scenario: string, runs: [SideRun, SideRun]) => Promise<Measurement[]>,
): Promise<Measurement[]> {
  const results: Measurement[] = [];
  let fastest = 0;
  for (const endpoint of NOTES_ENDPOINTS) {
    const run = (side: NotesSide): SideRun => ({
      side,
      ready: () => endpoint.ready(side.table, fastest, round.timing),
    });
    const measured = await measure(endpoint.scenario, [run(sides[0]), run(sides[1])]);
    fastest = Math.max(
      fastest,
      ...measured.flatMap((m) => [m.load.requestsPerSecond, m.peer?.requestsPerSecond ?? 0]),
    );
    results.push(...measured);
  }
  return results;
}

const responseBytes = async (url: string) =>
  (await send(url, { method: 'GET', path: '/notes', timeoutMs: 120_000 })).body.length;

/**
 * One round of a notes service: each endpoint against the peer's (`peer`, its notes in the 8080
 * shape), then the list of LARGE_LIST notes on one connection.
 */
export async function notesRound(
  round: Round,
  service: NotesService,
  table: NotesTable,
  peer: NotesSide,
): Promise<Measurement[]> {
  const url = serviceUrl(round.urls, service);
  const results = await eachEndpoint(
    round,
    [{ url, pid: round.serverPid, table }, peer],
    async (scenario, [ours, theirs]) => {
      const measured = await againstPeer(round, { service: service.label, scenario }, ours, theirs);
      if (scenario === LIST_SCENARIO) measured.responseBytes = await responseBytes(url);
      return [measured];
    },
  );

  await resetNotes(table, LARGE_LIST);
  const scenario = `GET /notes (${LARGE_LIST.toLocaleString('en')} notes)`;
  const large = await measureScenario(round.serverPid, round.timing, {
    service: service.label,
    scenario,
    load: { url, path: '/notes', connections: 1 },
  });
  large.responseBytes = await responseBytes(url);
  return [...results, large];
}

/**
 * A notes service under hostile load: the list of notes as large as a request body may be, read
 * by several clients at once (req/s and memory), and reads of one note while logins keep the
 * password checks as busy as they can be (latency).
 */
export async function hostileRound(
  round: Round,
  service: NotesService,
  table: NotesTable,
  auth: AuthConfig,
): Promise<Measurement[]> {
  const url = serviceUrl(round.urls, service);
  await resetBigNotes(table, BIG_NOTES);
  // A request reads 60 MiB: a one-second run would see few of them end.
  const timing = { ...round.timing, seconds: Math.max(round.timing.seconds, 4) };
  const load = { url, path: '/notes', connections: BIG_LIST_CONNECTIONS };
  const big = await measureScenario(round.serverPid, timing, {
    service: service.label,
    scenario: `GET /notes (${BIG_NOTES} notes of 1 MiB)`,
    load,
  });
  big.responseBytes = await responseBytes(url);

  // Logins keep libuv's threads busy with password checks and the event loop with logins: the
  // reads beside them show what that costs a note.
  const ids = await resetNotes(table, SMALL_LIST);
  const admin = auth.accounts.find((account) => account.role === 'admin')!;
  const logins = loginLoad(round.urls.auth, admin, LOGIN_CONNECTIONS);
  const readers = { url, path: '/notes/{id}', ids: { cycle: ids }, connections: LOGIN_READERS };
  const scenario = `GET /notes/{id} during logins (${LOGIN_CONNECTIONS} login connections)`;
  const duringLogins = await measureScenario(round.serverPid, round.timing, {
    service: service.label,
    scenario,
    load: readers,
    alongside: logins,
  });
  await emptyNotes(table);
  return [big, duringLogins];
}

/** 8000's health check against the peer's. */
export async function healthRound(round: Round, peer: Side): Promise<Measurement[]> {
  const ready = async (): Promise<Requests> => ({ path: '/health' });
  return [
    await againstPeer(
      round,
      { service: 'notes-8000', scenario: 'GET /health' },
      { side: { url: round.urls.notes8000, pid: round.serverPid }, ready },
      { side: peer, ready },
    ),
  ];
}
