import { spawn } from 'node:child_process';
import { ROOT, rssBytes, sampleRss, type RunningProcess, type ServiceUrls } from '../harness/processes.js';
import { measureHttp, measureHttpTogether, type HttpLoad, type LoadResult, type Timing } from './load.js';

/** What every scenario of one round shares: where the services are, and the HTTP limits for a load. */
export interface Round {
  urls: ServiceUrls;
  serverPid: number;
  timing: Timing;
  httpLimit(load: HttpLoad): Promise<LoadResult>;
  koaAlone(load: HttpLoad): Promise<LoadResult>;
}

/** One scenario measured once (one round), with the limits measured next to it. */
export interface Measurement {
  /** The same in every round, e.g. `notes-8080 GET /notes/{id}`. */
  id: string;
  service: string;
  scenario: string;
  connections: number;
  load: LoadResult;
  http?: LoadResult;
  koa?: LoadResult;
  /** The part of the work that is not HTTP, for a composed limit. */
  other?: { name: 'database' | 'password hash'; result: LoadResult };
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** Size of one response body, for list scenarios. */
  responseBytes?: number;
  /** Problems of the measurement itself (ran out of seeded notes, say). */
  warnings: string[];
  /** Set for a comparison's measurements, which are shown in their own table rather than the scenario table. */
  comparison?: Comparison;
}

/**
 * One side of a comparison of instances: `variant` names what sets its instance apart (it ends
 * the measurement's id: `auth GET /api/me (SESSION_STORE=postgres)`); `against`, the measurement of
 * the same round it is compared with and that one's variant (none: it is itself the baseline).
 */
export interface Comparison {
  variant: string;
  against?: { id: string; variant: string };
}

/**
 * The HTTP limits, for all rounds: a bare node:http server answering a small fixed JSON body, and
 * Koa alone answering the same body from one middleware (the floor no Koa route can go below),
 * each in its own process like the services.
 */
export async function startHttpLimits(services: RunningProcess, timing: Timing, { quick }: { quick: boolean }) {
  const bare = await startReferenceServer('node:http');
  const koa = await startReferenceServer('koa');
  return {
    round(): Round {
      // A quick run measures the bare limit once per round and connection count, to stay short.
      const known = new Map<number, Promise<LoadResult>>();
      const bareLimit = (load: HttpLoad) => {
        if (!quick) return httpLimit(bare, load, timing);
        if (!known.has(load.connections)) known.set(load.connections, httpLimit(bare, load, timing));
        return known.get(load.connections)!;
      };
      return { urls: services.urls, serverPid: services.pid, timing, httpLimit: bareLimit, koaAlone: (load) => httpLimit(koa, load, timing) };
    },
    stop: () => Promise.all([bare.stop(), koa.stop()]),
  };
}

/** The same round (timing, limits) for the services of another instance. */
export function roundOn(round: Round, services: RunningProcess): Round {
  return { ...round, urls: services.urls, serverPid: services.pid };
}

async function startReferenceServer(framework: 'node:http' | 'koa') {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bareHttpServer.ts', framework], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('\n')) resolve(Number(output.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the ${framework} server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The scenario's own requests sent to a reference server (which answers every request alike),
 * with ids from a counter of its own so that the limit uses up none of the scenario's notes.
 */
function httpLimit(server: { url: string; pid: number }, load: HttpLoad, timing: Timing): Promise<LoadResult> {
  let id = 0;
  return measureHttp({ ...load, url: server.url, nextId: load.nextId && (() => ++id) }, timing, server.pid);
}

/**
 * Runs one HTTP scenario while watching the server's memory, right after the bare HTTP limit
 * (and Koa alone, when that is the limit) for the same requests, so that both see the machine in
 * the same state. `alongside`: another load running at the same time, not measured itself.
 */
export async function measureScenario(
  round: Round,
  spec: { service: string; scenario: string; load: HttpLoad; limit?: 'http' | 'koa' | 'none'; alongside?: HttpLoad; comparison?: Comparison },
): Promise<Measurement> {
  const { service, scenario, load, limit = 'http', alongside, comparison } = spec;
  const http = limit === 'none' ? undefined : await round.httpLimit(load);
  const koa = limit === 'koa' ? await round.koaAlone(load) : undefined;
  const rssBeforeBytes = await rssBytes(round.serverPid);
  const sampler = sampleRss(round.serverPid);
  const result = alongside ? (await measureHttpTogether([load, alongside], round.timing))[0]! : await measureHttp(load, round.timing, round.serverPid);
  const peakRssBytes = await sampler.stop();
  const id = `${service} ${scenario}${comparison ? ` (${comparison.variant})` : ''}`;
  return { id, service, scenario, connections: load.connections, load: result, http, koa, rssBeforeBytes, peakRssBytes, warnings: [], comparison };
}

/** Adds the second part of a composed limit (database or password hash) to a measured scenario. */
export function withOtherPart(measurement: Measurement, name: 'database' | 'password hash', result: LoadResult): Measurement {
  const warnings = result.errors > 0 ? [`${result.errors} errors in the ${name} limit run`] : [];
  return { ...measurement, other: { name, result }, warnings: [...measurement.warnings, ...warnings] };
}
