import { performance } from 'node:perf_hooks';

const LOOK_EVERY_MS = 1_000;
/** The event loop's share of busy time below which the process counts as quiet. */
const QUIET_UTILIZATION = 0.05;
/** Growth of the resident set over its last low point that is worth a collection's pause. */
const GROWTH_BYTES = 32 * 2 ** 20;

/**
 * Gives the memory of a burst (a long list read by many, say) back to the system once the
 * process is quiet. V8's memory reducer is meant to do this, but on Node 24 it was seen to keep
 * waiting after a burst ("high alloc") while the heap, its 128 MB young generation included, stayed
 * at its peak size until the reducer's watchdog some 100 s later; and V8 keeps the pages an
 * ordinary collection frees in a pool of its own. So once a second this looks at the resident set:
 * when the process is quiet and holds 32 MB more than at its last low point, it runs the collection
 * V8 keeps for when memory runs out (several compacting rounds, the young generation shrunk, the
 * pool released), once, and that becomes the new low point. It needs `--expose-gc` (the start
 * script passes it); without it, it does nothing.
 */
export function collectWhenQuiet(): () => Promise<void> {
  const collect = globalThis.gc;
  if (!collect) return async () => {};
  let since = performance.eventLoopUtilization();
  let lowPoint = process.memoryUsage.rss();
  const timer = setInterval(() => {
    const busy = performance.eventLoopUtilization(since).utilization;
    since = performance.eventLoopUtilization();
    const rss = process.memoryUsage.rss();
    lowPoint = Math.min(lowPoint, rss);
    if (rss - lowPoint < GROWTH_BYTES || busy >= QUIET_UTILIZATION) return;
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    lowPoint = process.memoryUsage.rss();
  }, LOOK_EVERY_MS);
  timer.unref();
  return async () => clearInterval(timer);
}
