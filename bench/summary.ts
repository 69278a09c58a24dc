import type { LoadResult } from './load.js';
import type { Comparison, Measurement } from './scenario.js';

/** NaN when a value is: a figure some round lacks is not known. */
export function median(values: number[]): number {
  if (values.length === 0 || values.some(Number.isNaN)) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const NOT_MEASURED: LoadResult = { requestsPerSecond: NaN, p50: NaN, p99: NaN, mean: NaN, errors: 0, requests: 0, cpuUs: NaN };

/** One round's figures of a scenario; NaN where it has no such limit, and for the `against` figures unless it is compared with `baseline`. */
function figuresOf({ load, http = NOT_MEASURED, koa, other }: Measurement, baseline = NOT_MEASURED) {
  const part = other?.result ?? NOT_MEASURED;
  // A composed limit is what one Node process doing the HTTP part and the other part back to back could reach.
  const limit = koa ?? (other ? { requestsPerSecond: 1 / (1 / http.requestsPerSecond + 1 / part.requestsPerSecond), cpuUs: http.cpuUs + part.cpuUs } : http);
  return {
    requestsPerSecond: load.requestsPerSecond,
    p50: load.p50,
    p99: load.p99,
    mean: load.mean,
    /** Server CPU per request (µs). */
    cpuUs: load.cpuUs,
    limit: limit.requestsPerSecond,
    /** req/s over the limit's, and the limit's CPU per request over the service's. */
    ratio: load.requestsPerSecond / limit.requestsPerSecond,
    cpuRatio: limit.cpuUs / load.cpuUs,
    http: http.requestsPerSecond,
    httpCpuUs: http.cpuUs,
    httpRatio: load.requestsPerSecond / http.requestsPerSecond,
    koa: koa?.requestsPerSecond ?? NaN,
    koaCpuUs: koa?.cpuUs ?? NaN,
    /** Koa alone over the bare node:http server. */
    koaRatio: (koa?.requestsPerSecond ?? NaN) / http.requestsPerSecond,
    other: part.requestsPerSecond,
    otherP50: part.p50,
    otherP99: part.p99,
    otherCpuUs: part.cpuUs,
    /** A comparison's baseline in the same round (its req/s and CPU per request), and this side's over the baseline's. */
    againstRequestsPerSecond: baseline.requestsPerSecond,
    againstCpuUs: baseline.cpuUs,
    againstRatio: load.requestsPerSecond / baseline.requestsPerSecond,
    againstCpuRatio: load.cpuUs / baseline.cpuUs,
  };
}

/** A scenario over all rounds: the median of each figure, worst case for errors and memory. */
export type Summary = ReturnType<typeof figuresOf> & {
  id: string;
  service: string;
  scenario: string;
  connections: number;
  /** What the scenario is judged against: Koa alone, the bare HTTP server, or HTTP composed with the other part. */
  limitKind?: 'Koa' | 'HTTP' | 'HTTP+DB' | 'HTTP+hash';
  otherName?: 'database' | 'password hash';
  /** All rounds together. */
  errors: number;
  peakRssBytes: number;
  /** Highest peak minus the RSS just before the scenario, over the rounds. */
  rssGrowthBytes: number;
  responseBytes?: number;
  warnings: string[];
  comparison?: Comparison;
};

export function summarize(rounds: Measurement[][]): Summary[] {
  // Each measurement with the baseline it is compared with in its own round, if any.
  const byId = new Map<string, { measurement: Measurement; baseline?: LoadResult }[]>();
  for (const round of rounds) {
    for (const measurement of round) {
      const against = measurement.comparison?.against;
      const baseline = against && (round.find((m) => m.id === against.id)?.load ?? NOT_MEASURED);
      byId.set(measurement.id, [...(byId.get(measurement.id) ?? []), { measurement, baseline }]);
    }
  }
  return [...byId.values()].map((pairs) => {
    const all = pairs.map((pair) => pair.measurement);
    const { id, service, scenario, connections, http, koa, other, comparison } = all[0]!;
    const figures = pairs.map((pair) => figuresOf(pair.measurement, pair.baseline));
    const medians = Object.fromEntries(Object.keys(figures[0]!).map((key) => [key, median(figures.map((f) => f[key as keyof typeof f]))]));
    return {
      ...(medians as ReturnType<typeof figuresOf>),
      id,
      service,
      scenario,
      connections,
      limitKind: koa ? 'Koa' : !http ? undefined : !other ? 'HTTP' : other.name === 'database' ? 'HTTP+DB' : 'HTTP+hash',
      otherName: other?.name,
      errors: all.reduce((sum, m) => sum + m.load.errors, 0),
      peakRssBytes: Math.max(...all.map((m) => m.peakRssBytes)),
      rssGrowthBytes: Math.max(...all.map((m) => m.peakRssBytes - m.rssBeforeBytes)),
      responseBytes: all.at(-1)!.responseBytes,
      warnings: [...new Set(all.flatMap((m) => m.warnings))],
      comparison,
    };
  });
}
