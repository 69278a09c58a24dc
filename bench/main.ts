import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { postgresVersion } from '../harness/postgres.js';
import { ROOT, rssBytes } from '../harness/processes.js';
import { loadConfig } from '../server/config.js';
import { authRound, LOGIN_CONNECTIONS } from './auth.js';
import { startStoreComparison } from './compare.js';
import {
  databaseUrl,
  discard,
  discardAll,
  measureStartup,
  SERVICE_ENV,
  startInstance,
} from './instance.js';
import {
  BIG_LIST_CONNECTIONS,
  BIG_NOTES,
  healthRound,
  hostileRound,
  LARGE_LIST,
  LOGIN_READERS,
  NOTES_SERVICES,
  notesRound,
  openServiceTable,
  PEER_NOTES,
  SMALL_LIST,
} from './notes.js';
import { openNotesTable, type NotesTable } from './notesTable.js';
import { parseOptions, type Group } from './options.js';
import {
  measureLighthouse,
  measurePageWeights,
  measureTimeToInteractive,
  type PagesReport,
} from './pages.js';
import { PEER, startPeer, type PeerProcess } from './peerProcess.js';
import { printProfiles } from './profile.js';
import { markdownReport, type Report } from './report.js';
import type { Measurement, Round } from './scenario.js';
import { SIDE_BY_SIDE_CONNECTIONS } from './sides.js';
import { summarize } from './summary.js';
import { checkTargets } from './targets.js';

/**
 * `npm run bench`: every service measured against a peer written with Fastify and pg
 * (bench/peer.ts), side by side in the same rounds, and against its own targets, in one run.
 * Start-up first, then the rounds, each on processes started afresh for it (see freshRound).
 */
const options = parseOptions(process.argv.slice(2));
const wants = (group: Group) => options.groups.has(group);
/** The groups whose scenarios are measured against the peer. */
const PEER_GROUPS: Group[] = ['auth', 'health', 'notes-8080', 'notes-8000'];
const config = loadConfig({ ...process.env, ...SERVICE_ENV });
const problems: string[] = [];
const started = performance.now();
const log = (message: string) =>
  console.error(
    `[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`,
  );

// Whatever ends the run early, the services it started (and their PostgreSQL) go with it.
process.once('SIGINT', () => void discardAll().finally(() => process.exit(130)));
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.once(event, (error) => {
    console.error('[bench] the benchmark itself failed:', error);
    void discardAll().finally(() => process.exit(1));
  });
}

/** A step that fails is reported and the rest of the run goes on. */
async function step<T>(name: string, work: () => Promise<T>): Promise<T | undefined> {
  log(name);
  try {
    return await work();
  } catch (error) {
    problems.push(`${name} failed: ${(error as Error).message.split('\n')[0]}`);
    log(`${name} failed: ${(error as Error).stack}`);
    return undefined;
  }
}

let spa: Report['spa'];
let startup: Report['startup'];
if (wants('startup'))
  startup = await step('timing cold and warm starts of npm start', () =>
    measureStartup(options.startRuns),
  );
const profileDir = path.join(os.tmpdir(), `bench-cpu-profiles-${Date.now()}`);
let postgres = 'unknown';
const loadAverage: Report['loadAverage'] = [NaN, NaN];
const rounds: Measurement[][] = [];
const rss: Report['rss'] = { idle: [], afterRun: [], afterHostile: [] };
for (let index = 1; index <= options.rounds; index++) {
  const measured = await freshRound(index);
  if (measured) rounds.push(measured);
}
loadAverage[1] = os.loadavg()[0]!;
await discardAll();

/**
 * One round, on processes of its own: the services, the peer and the comparisons' instances are
 * all started afresh for it and stopped after it. Two processes of one program differ here by
 * more than the targets' margin for their whole life (bench/FINDINGS.md, "One process against the
 * next"), so the medians over the rounds compare several pairs of processes, not one pair several
 * times. Each round's services serve the pages first, as a process serving everything does.
 */
async function freshRound(index: number): Promise<Measurement[] | undefined> {
  const name = `round ${index} of ${options.rounds}`;
  const instance = await step(`${name}: starting the services`, () =>
    startInstance(
      'compiled',
      options.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
      { METRICS_PORT: '0' },
    ),
  );
  if (!instance) return undefined;
  const services = instance.process;
  const url = await databaseUrl(instance);
  const database = { url, poolMax: config.database.poolMax };
  if (index === 1) postgres = await postgresVersion(url);
  const onPoolError = (label: string) => (error: Error) =>
    problems.push(`${label} benchmark pool: ${error.message}`);
  const notes = NOTES_SERVICES.filter((service) => wants(service.label)).map((service) => ({
    service,
    table: openServiceTable(service, database, onPoolError(service.label)),
  }));
  let peer: (PeerProcess & { table: NotesTable }) | undefined;
  let store: Awaited<ReturnType<typeof startStoreComparison>> | undefined;
  const stopComparisons = async () => {
    if (store)
      await step(`${name}: stopping the login service with SESSION_STORE=postgres`, store.stop);
    store = undefined;
  };
  const measured: Measurement[] = [];
  try {
    // The peer and the comparisons' instances start together, before the pages: idle, they do not
    // disturb them.
    [peer, store] = await Promise.all([
      PEER_GROUPS.some(wants)
        ? step(`${name}: starting the peer (${PEER}, bench/peer.ts)`, async () => ({
            ...(await startPeer(database)),
            table: openNotesTable(PEER_NOTES, database, onPoolError('peer')),
          }))
        : undefined,
      wants('session-store')
        ? step(
            `${name}: starting the login service with SESSION_STORE=postgres`,
            startStoreComparison,
          )
        : undefined,
    ]);
    const peerSide = () => {
      if (!peer) throw new Error('the peer is not running');
      return peer;
    };
    if (wants('pages')) spa = await servePages(services.urls.auth, name, spa);
    rss.idle.push(await rssBytes(services.pid));
    if (index === 1) loadAverage[0] = os.loadavg()[0]!;
    const round: Round = {
      number: index,
      urls: services.urls,
      serverPid: services.pid,
      timing: options.timing,
    };
    const add = async (scenario: string, work: () => Promise<Measurement[]>) =>
      measured.push(...((await step(`${name}: ${scenario}`, work)) ?? []));
    if (wants('auth') || store) {
      await add('auth', () =>
        authRound(round, config.auth, {
          peer: wants('auth') ? peerSide() : undefined,
          logins: wants('auth'),
          postgresStore: store?.side,
        }),
      );
    }
    if (wants('health')) await add('notes-8000 /health', () => healthRound(round, peerSide()));
    for (const { service, table } of notes)
      await add(service.label, () => notesRound(round, service, table, peerSide()));
    await stopComparisons();
    // Before the hostile-load scenarios: lists of big notes leave V8's heap grown for a while after
    // them, which says nothing about what the ordinary scenarios leave behind.
    rss.afterRun.push(await rssBytes(services.pid));
    for (const { service, table } of notes)
      await add(`${service.label} under hostile load`, () =>
        hostileRound(round, service, table, config.auth),
      );
    rss.afterHostile.push(await rssBytes(services.pid));
    return measured;
  } finally {
    for (const { table } of notes) await table.pool.end();
    await stopComparisons();
    if (peer) {
      await peer.table.pool.end();
      await step(`${name}: stopping the peer`, peer.stop);
    }
    await step(`${name}: stopping the services`, () => discard(instance));
  }
}

/**
 * The pages as the admin sees them (the dashboard's larger form), measured on this round's
 * services: the page weights, the login page's time to interactive and Lighthouse, each round's
 * runs added to the earlier rounds'.
 */
async function servePages(
  authUrl: string,
  name: string,
  before: PagesReport | undefined,
): Promise<PagesReport> {
  const admin = config.auth.accounts.find((account) => account.role === 'admin')!;
  const weights = await step(`${name}: page weights (bytes over the wire)`, () =>
    measurePageWeights(authUrl, admin),
  );
  const times = await step(`${name}: login page time to interactive`, () =>
    measureTimeToInteractive(`${authUrl}/login`, options.pageLoads),
  );
  const lighthouse =
    options.lighthouseRuns > 0
      ? await step(`${name}: Lighthouse on /login and /dashboard`, () =>
          measureLighthouse(authUrl, admin, options.lighthouseRuns),
        )
      : [];
  return {
    weights: weights ?? before?.weights ?? [],
    timeToInteractiveMs: [...(before?.timeToInteractiveMs ?? []), ...(times ?? [])],
    lighthouse: [...(before?.lighthouse ?? []), ...(lighthouse ?? [])],
  };
}

if (options.cpuProfile) await printProfiles(profileDir);

const summaries = summarize(rounds);
const report: Report = {
  quick: options.quick,
  date: new Date().toISOString(),
  postgres,
  loadAverage,
  method: method(),
  summaries,
  targets: checkTargets({
    summaries,
    startup,
    spa,
    rssAfterRunBytes: rss.afterRun.length ? Math.max(...rss.afterRun) : undefined,
  }),
  startup,
  spa,
  rss,
  problems,
  findings: await fs
    .readFile(path.join(ROOT, 'bench', 'FINDINGS.md'), 'utf8')
    .catch(() => undefined),
};
console.log(`\n${markdownReport(report, { terminal: true })}`);
if (options.reportFile) {
  await fs.writeFile(path.resolve(ROOT, options.reportFile), markdownReport(report));
  log(`wrote ${options.reportFile}`);
}
const missed = report.targets.filter((target) => !target.met);
process.exit(problems.length > 0 || (!options.quick && missed.length > 0) ? 1 : 0);

function method(): string[] {
  const { warmupSeconds, seconds } = options.timing;
  const ownDatabase = process.env.DATABASE_URL
    ? 'a throwaway database on DATABASE_URL'
    : 'embedded PostgreSQL';
  const poolMax = config.database.poolMax;
  return [
    `The services run as \`npm start\` runs them, plain \`node\` on the entry point ` +
      `compiled by its \`prestart\` (started directly, so that the benchmark reads the ` +
      `server's own process), all three in one process, on the embedded ` +
      `PostgreSQL` +
      (process.env.DATABASE_URL ? ' (here: a throwaway database on DATABASE_URL)' : '') +
      ` ` +
      `in a temporary data folder, started afresh for every round together with the ` +
      `peer and the comparisons' instances (two processes of one program differ here ` +
      `by more than the targets' margin for their whole life: each round compares ` +
      `a new pair), each round's services serving the pages (page ` +
      `weights, ${options.pageLoads} login page ` +
      `loads${options.lighthouseRuns ? ' and a Lighthouse run of each page' : ''}) before ` +
      `its load, with \`LOG_LEVEL=warn\` (request lines off: the peer logs nothing ` +
      `either), its metrics on (\`METRICS_PORT=0\`: every request measured), request ids ` +
      `on (they always are) and every other setting at its default, so every safety is on; ` +
      `the default password hash cost (${config.auth.passwordHashCost}) and a database ` +
      `pool of ${poolMax}.`,
    `The peer (bench/peer.ts): the 8080 notes spec, \`GET /health\` and \`GET /api/me\` ` +
      `written with Fastify 5 and \`pg\` as a performance-minded Node developer would: ` +
      `JSON-schema validation and response schemas compiled by Fastify, named prepared ` +
      `statements, the same four security headers on every answer, \`/api/me\` looking ` +
      `its session cookie up in a Map. Compiled by esbuild and run by plain \`node\` in ` +
      `a process of its own, on the same PostgreSQL as the services (the same database, ` +
      `its notes in a schema of its own) with a pool of the same size (${poolMax}).`,
    `Load: wrk, one thread, in a process of its own, with a Lua script per run for the ` +
      `method, headers, body and the ids of \`/notes/{id}\`; no pipelining; ${warmupSeconds} ` +
      `s warm-up then ${seconds} s measured per run, and a quarter of a second after each ` +
      `for the requests wrk left in flight to be ` +
      `answered; ` +
      (options.rounds > 1
        ? `${options.rounds} rounds, each scenario's numbers are the median over the rounds`
        : '1 round') +
      `. ` +
      `This machine has ${os.availableParallelism()} cores shared by ` +
      `wrk, the server and PostgreSQL. Errors: connection errors, timeouts ` +
      `(no answer within 10 s) and answers other than 2xx. CPU µs per ` +
      `request: the server's Node processes' user and system time from ` +
      `/proc over the measured run, per request (not PostgreSQL's).`,
    `Against the peer, in every round: \`GET /health\` (8000), \`GET /api/me\` (auth, ` +
      `with a session cookie from a login; the peer with the cookie it knows) and, for ` +
      `each notes service, \`GET /notes\` of ${SMALL_LIST} notes, \`GET\`, \`PUT\` and ` +
      `\`DELETE /notes/{id}\` and \`POST /notes\` (8000's against the peer's 8080-shaped ` +
      `equivalents, whose bodies are \`{title, body}\`), each on the service and on ` +
      `the peer back to back, which goes first alternating from round to round, ` +
      `on ${SIDE_BY_SIDE_CONNECTIONS} connections each with the same requests, each side ` +
      `readied alike: its table holds exactly ${SMALL_LIST} notes before the list's run, ` +
      `reads and updates cycle over their ids, each DELETE takes a note of its own seeded ` +
      `for it, POST creates. Targets, on the medians over the rounds: req/s at least ` +
      `0.85 × the peer's and CPU µs per request at most 1.25 × the peer's, no errors.`,
    `Logins: \`POST /api/login\` with the right password on ${LOGIN_CONNECTIONS} ` +
      `connections: the login service checks at most 2 passwords at once per client ` +
      `address (more are refused with 429 at once) and 2 at a time in all, and every ` +
      `login comes from the benchmark's one address, so ${LOGIN_CONNECTIONS} connections ` +
      `keep the checks as busy as they can be; a refusal counts as an error, not a ` +
      `login. Then \`GET /api/me\` on 1 connection beside the same logins (latency).`,
    `Large lists: \`GET /notes\` of ${LARGE_LIST.toLocaleString('en')} ` +
      `notes from each notes service, on 1 connection (time and memory), ` +
      `after its endpoints in each round. RSS after the run: the server's ` +
      `RSS after a round's ordinary scenarios, the largest of the rounds.`,
    `Hostile load, after the ordinary scenarios of each round (the RSS after the ` +
      `run is read before it): \`GET /notes\` of ${BIG_NOTES} notes of 1 MiB of random ` +
      `base64 on ${BIG_LIST_CONNECTIONS} connections (req/s and memory, no target), ` +
      `and \`GET /notes/{id}\` on ${LOGIN_READERS} connections while ${LOGIN_CONNECTIONS} ` +
      `connections log in as the admin with the right password at the default ` +
      `hash cost (the reads are measured; the logins must see no errors either).`,
    'Memory: RSS of the server process sampled every 50 ms during each scenario; growth ' +
      'is the peak minus the RSS just before the warm-up. Each GET /notes list scenario ' +
      'starts from a table of exactly that many notes; deletes get notes seeded for them.',
    'Start-up: `npm start` itself at the default log level (its lines ' +
      'say where the services listen), timed from the command until all ' +
      'three ports answer an HTTP request; cold with an empty data folder ' +
      '(the database cluster is created), warm on the same folder again.',
    `Session store comparison: a second instance with \`SERVICES=auth SESSION_STORE=postgres\`, ` +
      `started like the main one (the compiled entry point, the same settings, a data ` +
      `folder and ${ownDatabase} of its own). In each round, right after the main instance's ` +
      `GET /api/me (sessions in memory) and the peer's, the same load ` +
      `(${SIDE_BY_SIDE_CONNECTIONS} connections, with a session cookie from a login on that ` +
      `instance) goes to it; there each request costs an indexed statement in PostgreSQL. ` +
      `Target: its req/s at least half the memory store's in the same round (the median of ` +
      `the rounds' ratios). Its CPU per request counts the Node process only, not ` +
      `PostgreSQL's work.`,
  ];
}
