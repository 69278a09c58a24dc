import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { loadConfig } from '../server/shared/config.js';
import { summarize } from './aggregate.js';
import { authRound, LOGIN_CONNECTIONS } from './auth.js';
import { startStatementRecorder, type NotesOperation, type StatementRecorder, type StatementTemplate } from './capture.js';
import { benchDatabase, postgresVersion, schemaPool } from './database.js';
import { healthRound } from './health.js';
import { httpLimit, startBareHttpServer } from './limits.js';
import type { HttpLoad } from './load.js';
import { describeMachine } from './machine.js';
import { NOTES_CONNECTIONS, notesRound, SMALL_LIST } from './notes.js';
import { NOTES_SERVICES } from './notesServices.js';
import { parseOptions, type Group } from './options.js';
import { measureBundle, measureTimeToInteractive } from './pages.js';
import { rssBytes } from './proc.js';
import { formatProfile, profilesIn, summarizeProfile } from './profile.js';
import { markdownReport, terminalReport, type Report } from './report.js';
import type { Measurement, SpaReport, StartupTimes } from './results.js';
import type { Round } from './scenario.js';
import { resetNotes } from './seed.js';
import { ROOT, serviceEnvironment, startServices, stopAllServices, temporaryDataDir } from './services.js';
import { discard, measureStartup, type Instance } from './startup.js';
import { checkTargets } from './targets.js';

/**
 * `npm run bench`: every service against the limits of this machine, measured in one run.
 * Pages and start-up first, then the load rounds on one running instance of the services.
 */
const options = parseOptions(process.argv.slice(2));
const wants = (group: Group) => options.groups.has(group);
const config = loadConfig(serviceEnvironment());
const problems: string[] = [];
const started = performance.now();
const log = (message: string) => console.error(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`);

// Whatever ends the run early, the services it started (and their PostgreSQL) go with it.
process.once('SIGINT', () => {
  void stopAllServices().finally(() => process.exit(130));
});
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.once(event, (error) => {
    console.error('[bench] the benchmark itself failed:', error);
    void stopAllServices().finally(() => process.exit(1));
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

let spa: SpaReport | undefined;
if (wants('pages')) {
  const bundle = await step('building and sizing the pages', measureBundle);
  if (bundle) spa = { ...bundle, timeToInteractiveMs: [] };
}
// The last warm start serves the load rounds, except under --cpu-prof, where the service
// process must be started with the profiler's flags.
let startup: StartupTimes | undefined;
let instance: Instance | undefined;
if (wants('startup')) {
  const measured = await step('timing cold and warm starts of npm start', () => measureStartup(options.startRuns));
  startup = measured?.times;
  instance = measured?.running;
}
const profileDir = path.join(os.tmpdir(), `bench-cpu-profiles-${Date.now()}`);
if (instance && options.cpuProfile) {
  await instance.services.stop();
  await discard(instance);
  instance = undefined;
}
if (!instance) {
  log('starting the services for the load rounds');
  const dataDir = await temporaryDataDir();
  const database = await benchDatabase(dataDir);
  const nodeFlags = options.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  instance = { services: await startServices({ dataDir, via: 'node', databaseUrl: database.serviceUrl, nodeFlags }), dataDir, database };
}
const { services, database } = instance;
const databaseUrl = await database.url();
const machine = describeMachine(await postgresVersion(databaseUrl));
const rounds: Measurement[][] = [];
let rssAfterRunBytes: number | undefined;
let rssIdleBytes: number | undefined;
const pools = new Map(NOTES_SERVICES.map((service) => [service.name, schemaPool(databaseUrl, service.schema, config.database.poolMax, (error) => problems.push(`${service.name} benchmark pool: ${error.message}`))]));

const templates = new Map<string, Record<NotesOperation, StatementTemplate>>();
const recorders = new Map<string, StatementRecorder>();
try {
  if (spa) {
    const times = await step('login page time to interactive', () => measureTimeToInteractive(`${services.urls.auth}/login`, options.pageLoads));
    if (times) spa.timeToInteractiveMs = times;
  }

  for (const service of NOTES_SERVICES.filter((s) => wants(s.name))) {
    const captured = await step(`recording the SQL of ${service.name}`, async () => {
      const recorder = await startStatementRecorder(service, databaseUrl, config.database);
      recorders.set(service.name, recorder);
      const ids = await resetNotes(pools.get(service.name)!, service, SMALL_LIST);
      return recorder.operations([ids[0]!, ids[1]!]);
    });
    if (captured) templates.set(service.name, captured);
  }

  rssIdleBytes = await rssBytes(services.pid);
  machine.loadAverage.before = os.loadavg()[0]!;
  const bare = await startBareHttpServer();
  const koaAlone = await startBareHttpServer('koa');
  try {
    for (let index = 0; index < options.rounds; index++) {
      const measureLimit = (load: HttpLoad) => httpLimit(bare, load, options.timing);
      const round: Round = {
        urls: services.urls,
        serverPid: services.pid,
        timing: options.timing,
        // A quick run measures the limit once per round and connection count, to stay short.
        httpLimit: options.quick ? memoize(measureLimit, (load) => load.connections) : measureLimit,
        koaFloor: (load) => httpLimit(koaAlone, load, options.timing),
      };
      const measured: Measurement[] = [];
      const add = (results: Measurement[] | undefined) => measured.push(...(results ?? []));
      if (wants('auth')) add(await step(`round ${index + 1} of ${options.rounds}: auth`, () => authRound(round, config.auth)));
      if (wants('health')) add(await step(`round ${index + 1} of ${options.rounds}: notes-8000 /health`, () => healthRound(round, NOTES_CONNECTIONS)));
      for (const service of NOTES_SERVICES) {
        const serviceTemplates = templates.get(service.name);
        if (!serviceTemplates) continue;
        add(await step(`round ${index + 1} of ${options.rounds}: ${service.name}`, () => notesRound(round, service, pools.get(service.name)!, serviceTemplates, recorders.get(service.name)!)));
      }
      rounds.push(measured);
    }
  } finally {
    await Promise.all([bare.stop(), koaAlone.stop()]);
  }
  rssAfterRunBytes = await rssBytes(services.pid);
  machine.loadAverage.after = os.loadavg()[0];
} finally {
  await Promise.all([...recorders.values()].map((recorder) => recorder.close()));
  await Promise.all([...pools.values()].map((pool: pg.Pool) => pool.end()));
  await services.stop().catch((error: Error) => problems.push(`stopping the services: ${error.message}`));
  await discard(instance);
}

if (options.cpuProfile) {
  for (const file of await profilesIn(profileDir)) console.log(`\n${formatProfile(file, await summarizeProfile(file))}`);
}

const summaries = summarize(rounds);
const report: Report = {
  quick: options.quick,
  machine,
  method: method(),
  summaries,
  targets: checkTargets({ summaries, startup, spa, rssAfterRunBytes: rounds.length ? rssAfterRunBytes : undefined }),
  startup,
  spa,
  rssAfterRunBytes,
  rssIdleBytes,
  problems,
  statements: [...templates].flatMap(([service, byOperation]) =>
    Object.entries(byOperation).map(([operation, template]) => ({ service, operation, sql: template.statements.map((s) => s.text) })),
  ),
  findings: await fs.readFile(path.join(ROOT, 'bench', 'FINDINGS.md'), 'utf8').catch(() => undefined),
};
console.log(`\n${terminalReport(report)}`);
if (options.reportFile) {
  await fs.writeFile(path.resolve(ROOT, options.reportFile), markdownReport(report));
  log(`wrote ${options.reportFile}`);
}
const missed = report.targets.filter((target) => !target.met);
process.exit(problems.length > 0 || (!options.quick && missed.length > 0) ? 1 : 0);

function memoize<A, K, T>(measure: (argument: A) => Promise<T>, key: (argument: A) => K): (argument: A) => Promise<T> {
  const known = new Map<K, Promise<T>>();
  return (argument) => {
    if (!known.has(key(argument))) known.set(key(argument), measure(argument));
    return known.get(key(argument))!;
  };
}

function method(): string[] {
  const { warmupSeconds, seconds } = options.timing;
  return [
    `The services are started by \`npm start\` (the last warm start of the start-up runs; the same compiled entry point started by \`node\` directly when profiling or without the start-up runs), all three in one process, on the embedded PostgreSQL${process.env.DATABASE_URL ? ' (here: a throwaway database on DATABASE_URL)' : ''} in a temporary data folder, with \`LOG_LEVEL=warn\` (one log line per request would otherwise dominate), the default password hash cost (${config.auth.passwordHashCost}) and a database pool of ${config.database.poolMax}.`,
    `Load: autocannon 8, run inside the benchmark's own process (one event loop, no workers), no pipelining; ${warmupSeconds} s warm-up then ${seconds} s measured per run; ${options.rounds > 1 ? `${options.rounds} rounds, each scenario's numbers are the median over the rounds` : '1 round'}. This machine has ${os.availableParallelism()} cores shared by the load generator, the server and PostgreSQL, so connection counts stay small: ${NOTES_CONNECTIONS} (one per pooled database connection) for throughput, ${LOGIN_CONNECTIONS} for logins (one per libuv thread, where scrypt runs), 1 for latency.`,
    `HTTP limit: a bare \`node:http\` server in its own process answering a small fixed JSON body to ${options.quick ? "the first scenario's requests at each connection count, once per round (quick run)" : "the scenario's own requests (method, paths, headers, body, connections), right before the scenario, so both see the machine in the same state"}.`,
    "Database limit: the exact statements each request issues, recorded from the service's own code (its app run on a Knex pool, every statement and its values captured in order, each request made for two notes to find the values that carry the id; the list's statements recorded again on each table size, as the list reads in batches), replayed with a `pg` Pool of the same size at the same concurrency, no HTTP in between, right after the scenario on the same data.",
    'Koa alone (for GET /health and GET /api/me, the routes held to the bare HTTP limit): the same requests answered by Koa with one middleware setting the same fixed body, in its own process, right after the HTTP limit: the floor that no Koa route can go below, shown in the Limits table and next to those targets.',
    'Composed limit for a database-backed endpoint: 1 / (1/HTTP + 1/DB), what one Node process doing both jobs back to back could reach. For logins the second part is the password check (the service\'s own scrypt code and cost) on libuv\'s thread pool.',
    `Memory: RSS of the server process sampled every 50 ms during each scenario; growth is the peak minus the RSS just before the warm-up. Each GET /notes list scenario starts from a table of exactly that many notes; deletes get notes seeded for them.`,
    'Start-up: `npm start` itself, timed from the command until all three ports answer an HTTP request; cold with an empty data folder (the database cluster is created), warm on the same folder again.',
  ];
}
