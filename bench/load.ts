import autocannon from 'autocannon';
import { percentile } from '../harness/http.js';
import { serverCpuMs } from '../harness/processes.js';

/**
 * The two load generators every scenario and every limit goes through: autocannon for HTTP, run
 * inside this process (one event loop, no worker threads) so that on a small machine it takes
 * about one core and leaves the rest to the server under test; and a closed loop of workers for
 * the work without HTTP (the database and the password check), as autocannon's connections do.
 */

export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

export interface HttpLoad {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, or its template (`/notes/{id}`) that `nextId` fills in before each request. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  nextId?: () => number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latencies in milliseconds (autocannon's percentiles have a 1 ms resolution). */
  p50: number;
  p99: number;
  mean: number;
  /** Connection errors, timeouts and non-2xx answers (for work without HTTP: what threw). */
  errors: number;
  requests: number;
  /**
   * CPU time per request (µs) of the processes doing the work during the measured run: the
   * server's Node processes for HTTP (with WORKERS, the primary and its workers; not PostgreSQL),
   * this process for the work without HTTP; NaN when not measured. Unlike req/s, it hardly moves
   * when other work competes for the machine.
   */
  cpuUs: number;
}

async function warmedUp<T>(timing: Timing, run: (seconds: number) => Promise<T>): Promise<T> {
  if (timing.warmupSeconds > 0) await run(timing.warmupSeconds);
  return run(timing.seconds);
}

/** autocannon counts time in whole seconds: shorter runs still last one. */
async function runAutocannon({ url, connections, method = 'GET', path, headers, body, nextId }: HttpLoad, seconds: number): Promise<LoadResult> {
  const setupRequest = (request: autocannon.Request) => ({ ...request, path: path.replace('{id}', String(nextId!())) });
  const requests = [{ method, path, headers, body, ...(nextId && { setupRequest }) }];
  const result = await autocannon({ url, connections, duration: Math.max(1, Math.round(seconds)), requests });
  const { latency, requests: { total } } = result;
  const errors = result.errors + result.non2xx;
  return { requestsPerSecond: total / result.duration, p50: latency.p50, p99: latency.p99, mean: latency.mean, errors, requests: total, cpuUs: NaN };
}

/** A warm-up whose numbers are thrown away, then the measured run and the CPU the server of `serverPid` (and its workers) spent on it. */
export function measureHttp(load: HttpLoad, timing: Timing, serverPid: number): Promise<LoadResult> {
  return warmedUp(timing, async (seconds) => {
    const cpuBefore = await serverCpuMs(serverPid);
    const result = await runAutocannon(load, seconds);
    return { ...result, cpuUs: (((await serverCpuMs(serverPid)) - cpuBefore) * 1000) / result.requests };
  });
}

/** Several loads at the same time (warmed up together, then measured together). */
export function measureHttpTogether(loads: HttpLoad[], timing: Timing): Promise<LoadResult[]> {
  return warmedUp(timing, (seconds) => Promise.all(loads.map((load) => runAutocannon(load, seconds))));
}

/** `concurrency` workers each running `work` back to back. */
export function measureWork(work: () => Promise<void>, concurrency: number, timing: Timing): Promise<LoadResult> {
  return warmedUp(timing, async (seconds) => {
    const latencies: number[] = [];
    let errors = 0;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const worker = async () => {
      while (performance.now() < started + seconds * 1000) {
        const begun = performance.now();
        try {
          await work();
          latencies.push(performance.now() - begun);
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const cpu = process.cpuUsage(cpuBefore);
    const requests = latencies.length + errors;
    return {
      requestsPerSecond: requests / ((performance.now() - started) / 1000),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      mean: latencies.reduce((sum, latency) => sum + latency, 0) / latencies.length,
      errors,
      requests,
      cpuUs: (cpu.user + cpu.system) / Math.max(1, requests),
    };
  });
}
