import type { LoadResult, Timing } from './load.js';
import { mean, percentile } from './stats.js';

/**
 * Closed-loop load without HTTP: `concurrency` workers each run `work` back to back for the
 * given time, like autocannon's connections do with requests.
 */
async function runWork(work: () => Promise<void>, concurrency: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
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
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    cpuUs: (cpu.user + cpu.system) / Math.max(1, latencies.length + errors),
    requestsPerSecond: (latencies.length + errors) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: mean(latencies),
    errors,
    requests: latencies.length + errors,
  };
}

export async function measureWork(work: () => Promise<void>, concurrency: number, timing: Timing): Promise<LoadResult> {
  if (timing.warmupSeconds > 0) await runWork(work, concurrency, timing.warmupSeconds);
  return runWork(work, concurrency, timing.seconds);
}
