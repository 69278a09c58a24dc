import { measureHttp, type HttpLoad, type LoadResult, type Timing } from './load.js';
import { rssBytes, sampleRss } from './proc.js';
import type { Limit, Measurement } from './results.js';
import type { ServiceUrls } from './services.js';
import { composedLimit } from './stats.js';

/** What every scenario of one round shares. */
export interface Round {
  urls: ServiceUrls;
  /** The process that runs the three services. */
  serverPid: number;
  timing: Timing;
  /**
   * The bare HTTP limit for this load: the same requests (method, paths, headers, body,
   * connections) sent to the bare server, measured now (or earlier this round, in a quick run).
   */
  httpLimit(load: HttpLoad): Promise<LoadResult>;
  /** The same requests answered by Koa alone (one middleware, the same fixed body). */
  koaFloor(load: HttpLoad): Promise<LoadResult>;
}

export interface ScenarioSpec {
  service: string;
  scenario: string;
  load: HttpLoad;
  /** Measure the HTTP limit right before the scenario (default true). */
  limit?: boolean;
  /** Also measure Koa alone for the same requests (for routes held to the bare HTTP limit). */
  koaFloor?: boolean;
}

/**
 * Runs one HTTP scenario (warm-up, then measured) while watching the server's memory, right
 * after the bare HTTP limit for the same requests, so that both see the same machine.
 */
export async function measureScenario(round: Round, spec: ScenarioSpec): Promise<Measurement> {
  const http = spec.limit === false ? undefined : await round.httpLimit(limitLoad(spec.load));
  const koa = spec.koaFloor ? await round.koaFloor(limitLoad(spec.load)) : undefined;
  const rssBeforeBytes = await rssBytes(round.serverPid);
  const sampler = sampleRss(round.serverPid);
  const load = await measureHttp(spec.load, round.timing, round.serverPid);
  return {
    id: `${spec.service} ${spec.scenario}`,
    service: spec.service,
    scenario: spec.scenario,
    connections: spec.load.connections,
    load,
    limit: http && { kind: 'http', requestsPerSecond: http.requestsPerSecond, http: http.requestsPerSecond, httpCpuUs: http.cpuUs },
    koaFloor: koa && { requestsPerSecond: koa.requestsPerSecond, cpuUs: koa.cpuUs },
    rssBeforeBytes,
    peakRssBytes: await sampler.stop(),
    warnings: [],
  };
}

/**
 * The scenario's requests for the bare server: paths made the same way, from the same `{id}`
 * template, but from a counter of its own, so that the limit uses up none of the scenario's notes.
 */
function limitLoad(load: HttpLoad): HttpLoad {
  if (!load.nextPath) return load;
  let id = 0;
  return { ...load, nextPath: () => load.path.replace('{id}', String(++id)) };
}

/** Adds the second part of a composed limit (database or password hash) to a measured scenario. */
export function withComposedLimit(measurement: Measurement, name: 'database' | 'password hash', other: LoadResult): Measurement {
  const { http, httpCpuUs } = measurement.limit!;
  const limit: Limit = {
    kind: 'composed',
    requestsPerSecond: composedLimit(http, other.requestsPerSecond),
    http,
    httpCpuUs,
    other: { name, requestsPerSecond: other.requestsPerSecond, p50: other.p50, p99: other.p99, cpuUs: other.cpuUs },
  };
  const warnings = other.errors > 0 ? [`${other.errors} errors in the ${name} limit run`] : [];
  return { ...measurement, limit, warnings: [...measurement.warnings, ...warnings] };
}
