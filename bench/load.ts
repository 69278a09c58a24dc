import autocannon from 'autocannon';
import { cpuMs } from './proc.js';

/**
 * HTTP load with autocannon, run inside the benchmark's own process (one event loop, no worker
 * threads), so that on a small machine it takes about one core and leaves the rest to the
 * server under test. Every scenario and every limit goes through this same generator.
 */

export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

export interface HttpLoad {
  /** Base URL of the server. */
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, or its template (`/notes/{id}`) when `nextPath` fills it in. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Called before each request for its path (e.g. rotating note ids); `path` otherwise. */
  nextPath?: () => string;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latencies in milliseconds (autocannon's histogram, 1 ms resolution for the percentiles). */
  p50: number;
  p99: number;
  mean: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
  requests: number;
  /**
   * CPU time per request, in microseconds, of the Node process doing the work during the
   * measured run (the server for HTTP; this process for the database and hash limits): unlike
   * req/s, it hardly moves when other work competes for the machine.
   */
  cpuUs?: number;
}

/** autocannon counts time in whole seconds: shorter runs still last one. */
export function runAutocannon(load: HttpLoad, seconds: number): Promise<LoadResult> {
  const { nextPath } = load;
  return autocannon({
    url: load.url,
    connections: load.connections,
    duration: Math.max(1, Math.round(seconds)),
    requests: [
      {
        method: load.method ?? 'GET',
        path: load.path,
        headers: load.headers,
        body: load.body,
        ...(nextPath && { setupRequest: (request) => ({ ...request, path: nextPath() }) }),
      },
    ],
  }).then((result) => ({
    requestsPerSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.mean,
    errors: result.errors + result.non2xx,
    requests: result.requests.total,
  }));
}

/** A warm-up whose numbers are thrown away, then the measured run (and the CPU `serverPid` spent on it). */
export async function measureHttp(load: HttpLoad, timing: Timing, serverPid?: number): Promise<LoadResult> {
  if (timing.warmupSeconds > 0) await runAutocannon(load, timing.warmupSeconds);
  const cpuBefore = serverPid === undefined ? Number.NaN : await cpuMs(serverPid);
  const result = await runAutocannon(load, timing.seconds);
  if (serverPid === undefined) return result;
  return { ...result, cpuUs: ((await cpuMs(serverPid)) - cpuBefore) * 1000 / result.requests };
}

/** Several loads at the same time (warm-up together, then measured together). */
export async function measureHttpTogether(loads: HttpLoad[], timing: Timing): Promise<LoadResult[]> {
  if (timing.warmupSeconds > 0) await Promise.all(loads.map((load) => runAutocannon(load, timing.warmupSeconds)));
  return Promise.all(loads.map((load) => runAutocannon(load, timing.seconds)));
}
