import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { postgresVersion } from '../harness/postgres.js';
import { ROOT, rssBytes } from '../harness/processes.js';
import { loadConfig } from '../server/shared/config.js';
import { authRound, LOGIN_CONNECTIONS, LOGIN_FLOOD_CONNECTIONS, ME_CONNECTIONS } from './auth.js';
import { startStoreComparison, startWorkersComparison, WORKERS_VARIANT } from './compare.js';
import { databaseUrl, discard, discardAll, measureStartup, SERVICE_ENV, startInstance } from './instance.js';
import { BIG_LIST_CONNECTIONS, BIG_NOTES, FLOOD_READERS, healthRound, NOTES_CONNECTIONS, NOTES_SERVICES, prepareNotes, SMALL_LIST, type PreparedNotes } from './notes.js';
import { parseOptions, type Group } from './options.js';
import { measureLighthouse, measurePageWeights, measureTimeToInteractive } from './pages.js';
import { printProfiles } from './profile.js';
import { markdownReport, type Report } from './report.js';
import { startHttpLimits, type Measurement } from './scenario.js';
import { summarize } from './summary.js';
import { checkTargets } from './targets.js';

/**
 * `npm run bench`: every service against the limits of this machine, measured in one run.
 * Pages and start-up first, then the load rounds on one running instance of the services.
 */
const options = parseOptions(process.argv.slice(2));
const wants = (group: Group) => options.groups.has(group);
const config = loadConfig({ ...process.env, ...SERVICE_ENV });
const problems: string[] = [];
const started = performance.now();
const log = (message: string) => console.error(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`);

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
if (wants('startup')) startup = await step('timing cold and warm starts of npm start', () => measureStartup(options.startRuns));
const profileDir = path.join(os.tmpdir(), `bench-cpu-profiles-${Date.now()}`);
log('starting the services for the load rounds');
const instance = await startInstance('compiled', options.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
const services = instance.process;
const url = await databaseUrl(instance);
const postgres = await postgresVersion(url);
const loadAverage: Report['loadAverage'] = [NaN, NaN];
const rounds: Measurement[][] = [];
let rssAfterRunBytes: number | undefined;
let rssAfterHostileBytes: number | undefined;
let rssIdleBytes: number | undefined;
const notes: PreparedNotes[] = [];
let store: Awaited<ReturnType<typeof startStoreComparison>> | undefined;
let workers: Awaited<ReturnType<typeof startWorkersComparison>> | undefined;
/** The comparisons' instances are stopped after the ordinary rounds, or when the run ends before. */
const stopComparisons = async () => {
  if (store) await step('stopping the login service with SESSION_STORE=postgres', store.stop);
  if (workers) await step(`stopping the notes services with ${WORKERS_VARIANT}`, workers.stop);
  store = workers = undefined;
};
try {
  if (wants('pages')) {
    // The dashboard as the admin sees it, the larger of its two forms.
    const admin = config.auth.accounts.find((account) => account.role === 'admin')!;
    const authUrl = services.urls.auth;
    spa = {
      weights: (await step('page weights (bytes over the wire)', () => measurePageWeights(authUrl, admin))) ?? [],
      timeToInteractiveMs: (await step('login page time to interactive', () => measureTimeToInteractive(`${authUrl}/login`, options.pageLoads))) ?? [],
      lighthouse: options.lighthouseRuns > 0 ? ((await step('Lighthouse on /login and /dashboard', () => measureLighthouse(authUrl, admin, options.lighthouseRuns))) ?? []) : [],
    };
  }
  for (const service of NOTES_SERVICES.filter((s) => wants(s.label))) {
    const onPoolError = (error: Error) => problems.push(`${service.label} benchmark pool: ${error.message}`);
    const prepared = await step(`recording the SQL of ${service.label}`, () => prepareNotes(service, url, config, onPoolError));
    if (prepared) notes.push(prepared);
  }
  // The comparisons' instances start together, once the main one's pages and SQL are done.
  const onComparisonPoolError = (error: Error) => problems.push(`${WORKERS_VARIANT} comparison pool: ${error.message}`);
  [store, workers] = await Promise.all([
    wants('session-store') ? step('starting the login service with SESSION_STORE=postgres', startStoreComparison) : undefined,
    wants('workers') ? step(`starting the notes services with ${WORKERS_VARIANT}`, () => startWorkersComparison(instance, config, onComparisonPoolError)) : undefined,
  ]);

  rssIdleBytes = await rssBytes(services.pid);
  loadAverage[0] = os.loadavg()[0]!;
  const limits = await startHttpLimits(services, options.timing, options);
  try {
    for (let index = 1; index <= options.rounds; index++) {
      const round = limits.round();
      const measured: Measurement[] = [];
      const add = async (name: string, work: () => Promise<Measurement[]>) => measured.push(...((await step(`round ${index} of ${options.rounds}: ${name}`, work)) ?? []));
      if (wants('auth') || store) await add('auth', () => authRound(round, config.auth, { logins: wants('auth'), postgresStore: store?.round(round) }));
      if (wants('health')) await add('notes-8000 /health', () => healthRound(round));
      for (const prepared of notes) await add(prepared.service.label, () => prepared.round(round));
      for (const compared of workers?.services ?? []) await add(`${compared.label}, WORKERS=1 then ${WORKERS_VARIANT}`, () => compared.round(round));
      rounds.push(measured);
    }
    await stopComparisons();
    // Before the hostile-load scenarios: lists of big notes leave V8's heap grown for a while after
    // them, which says nothing about what the ordinary rounds leave behind.
    rssAfterRunBytes = await rssBytes(services.pid);
    for (let index = 1; index <= options.rounds; index++) {
      const round = limits.round();
      for (const prepared of notes) {
        const measured = await step(`round ${index} of ${options.rounds}: ${prepared.service.label} under hostile load`, () => prepared.hostileRound(round));
        rounds[index - 1]?.push(...(measured ?? []));
      }
    }
    rssAfterHostileBytes = await rssBytes(services.pid);
  } finally {
    await limits.stop();
  }
  loadAverage[1] = os.loadavg()[0]!;
} finally {
  for (const prepared of notes) await prepared.close();
  await stopComparisons();
  await step('stopping the services', () => discard(instance));
  await discardAll();
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
  targets: checkTargets({ summaries, startup, spa, rssAfterRunBytes: rounds.length ? rssAfterRunBytes : undefined }),
  startup,
  spa,
  rssAfterRunBytes,
  rssAfterHostileBytes,
  rssIdleBytes,
  problems,
  statements: notes.flatMap(({ service, templates }) =>
    Object.entries(templates).map(([operation, template]) => ({ service: service.label, operation, sql: template.statements.map((s) => s.text) })),
  ),
  findings: await fs.readFile(path.join(ROOT, 'bench', 'FINDINGS.md'), 'utf8').catch(() => undefined),
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
  const database = process.env.DATABASE_URL ? 'a throwaway database on DATABASE_URL' : 'embedded PostgreSQL';
  return [
    `The services run as \`npm start\` runs them, plain \`node\` on the entry point compiled by its \`prestart\` (started directly, so that the benchmark reads the server's own process), all three in one process, on the embedded PostgreSQL${process.env.DATABASE_URL ? ' (here: a throwaway database on DATABASE_URL)' : ''} in a temporary data folder, with \`LOG_LEVEL=warn\` (one log line per request would otherwise dominate), the default password hash cost (${config.auth.passwordHashCost}) and a database pool of ${config.database.poolMax}.`,
    `Load: autocannon 8, run inside the benchmark's own process (one event loop, no workers), no pipelining; ${warmupSeconds} s warm-up then ${seconds} s measured per run; ${options.rounds > 1 ? `${options.rounds} rounds, each scenario's numbers are the median over the rounds` : '1 round'}. This machine has ${os.availableParallelism()} cores shared by the load generator, the server and PostgreSQL, so connection counts stay small: ${NOTES_CONNECTIONS} (one per pooled database connection) for throughput, ${LOGIN_CONNECTIONS} for logins (one per libuv thread, where scrypt runs), 1 for latency.`,
    `Hostile load, after the ordinary rounds (the RSS after the run is read before it) and without a limit beside it: GET /notes of ${BIG_NOTES} notes of 1 MiB of random base64 on ${BIG_LIST_CONNECTIONS} connections (req/s and memory, no target), and GET /notes/{id} on ${FLOOD_READERS} connections while ${LOGIN_FLOOD_CONNECTIONS} connections log in as the admin with the right password at the default hash cost (logins may be refused with 429 or 503; only the reads are measured).`,
    `HTTP limit: a bare \`node:http\` server in its own process answering a small fixed JSON body to ${options.quick ? "the first scenario's requests at each connection count, once per round (quick run)" : "the scenario's own requests (method, paths, headers, body, connections), right before the scenario, so both see the machine in the same state"}.`,
    "Koa alone: the same requests answered by Koa with one middleware setting the same fixed body, in its own process, right after the HTTP limit: the floor that no Koa route can go below, and the limit GET /health and GET /api/me are held to (routes that only answer); their ratio to the bare HTTP limit is shown beside the targets, Koa alone's in the Limits table.",
    "Database limit: the exact statements each request issues, recorded from the service's own code (its app run in the benchmark's process on a pool like the server's that logs every statement and its values, in order, at `trace`; each request made for two notes to find the values that carry the id; the list's statements recorded again on each table size, as the list reads in batches), replayed with a `pg` Pool of the same size at the same concurrency, no HTTP in between, right after the scenario on the same data.",
    "Composed limit for a database-backed endpoint: 1 / (1/HTTP + 1/DB), what one Node process doing both jobs back to back could reach. For logins the second part is the password check (the service's own scrypt code and cost) on libuv's thread pool.",
    'Memory: RSS of the server process sampled every 50 ms during each scenario; growth is the peak minus the RSS just before the warm-up. Each GET /notes list scenario starts from a table of exactly that many notes; deletes get notes seeded for them.',
    'Start-up: `npm start` itself at the default log level (its lines say where the services listen), timed from the command until all three ports answer an HTTP request; cold with an empty data folder (the database cluster is created), warm on the same folder again.',
    `Session store comparison: a second instance with \`SERVICES=auth SESSION_STORE=postgres\`, started like the main one (the compiled entry point, the same settings, a data folder and ${database} of its own). In each round, right after the main instance's GET /api/me (sessions in memory), the same load (${ME_CONNECTIONS} connections, with a session cookie from a login on that instance) goes to it, without a limit beside it; there each request costs an indexed statement in PostgreSQL. Target: its req/s at least half the memory store's in the same round (the median of the rounds' ratios). Its CPU per request counts the Node process only, not PostgreSQL's work.`,
    `Workers comparison: a third instance with \`SERVICES=notes8080,notes8000 ${WORKERS_VARIANT}\` (a node:cluster primary that hands each connection to one of its workers in turn), a data folder and ${database} of its own. In each round, after the notes rounds, each endpoint those measure on ${NOTES_CONNECTIONS} connections (GET /notes of ${SMALL_LIST} notes, GET, PUT and DELETE /notes/{id}, POST /notes) is readied alike on both instances' tables (the same list, notes of their own to delete) and its load sent to the main instance (WORKERS=1) and then to the ${WORKERS_VARIANT} one, back to back, without limits beside them. CPU per request sums the server's own Node processes, read from /proc: the primary and its workers (its descendants running the entry point), not PostgreSQL's. Target: CPU per request with ${WORKERS_VARIANT} at most 1.10 × with WORKERS=1, per endpoint. Req/s is reported without a target: this machine's ${os.availableParallelism()} cores are shared by the load generator, PostgreSQL and the server, so a second worker has no core of its own to add throughput with.`,
  ];
}
