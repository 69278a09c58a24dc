import type { Limit, Measurement } from './results.js';
import { median } from './stats.js';

/** A scenario over all rounds: medians of the rounds, worst case for errors and memory. */
export interface Summary {
  id: string;
  service: string;
  scenario: string;
  connections: number;
  rounds: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  mean: number;
  /** All rounds together. */
  errors: number;
  /** Server CPU per request (µs). */
  cpuUs?: number;
  limit?: {
    kind: Limit['kind'];
    requestsPerSecond: number;
    http: number;
    httpCpuUs?: number;
    other?: NonNullable<Limit['other']>;
    /** CPU per request the limits spent for the same work (HTTP + other), µs. */
    cpuUs?: number;
  };
  /** Median of each round's ratio to that round's limit. */
  ratio?: number;
  /** Koa alone: its median req/s and CPU per request, and its ratio to the same limit (median of the rounds). */
  koaFloor?: { requestsPerSecond: number; cpuUs?: number; ratio: number };
  /** Median of each round's limit CPU per request over the service's: the ratio, as CPU cost. */
  cpuRatio?: number;
  peakRssBytes: number;
  /** Highest peak minus the RSS just before the scenario, over the rounds. */
  rssGrowthBytes: number;
  responseBytes?: number;
  warnings: string[];
}

export function summarize(rounds: Measurement[][]): Summary[] {
  const byId = new Map<string, Measurement[]>();
  for (const measurement of rounds.flat()) byId.set(measurement.id, [...(byId.get(measurement.id) ?? []), measurement]);
  return [...byId.values()].map((all) => {
    const first = all[0]!;
    const of = (pick: (m: Measurement) => number) => median(all.map(pick));
    const optional = (values: (number | undefined)[]) =>
      values.every((value) => value !== undefined && !Number.isNaN(value)) ? median(values as number[]) : undefined;
    const limitCpu = (m: Measurement) =>
      m.limit?.httpCpuUs === undefined ? undefined : m.limit.httpCpuUs + (m.limit.other ? (m.limit.other.cpuUs ?? Number.NaN) : 0);
    const limited = all.filter((m) => m.limit);
    const other = limited[0]?.limit?.other;
    return {
      id: first.id,
      service: first.service,
      scenario: first.scenario,
      connections: first.connections,
      rounds: all.length,
      requestsPerSecond: of((m) => m.load.requestsPerSecond),
      p50: of((m) => m.load.p50),
      p99: of((m) => m.load.p99),
      mean: of((m) => m.load.mean),
      errors: all.reduce((sum, m) => sum + m.load.errors, 0),
      cpuUs: optional(all.map((m) => m.load.cpuUs)),
      limit: limited.length
        ? {
            kind: limited[0]!.limit!.kind,
            requestsPerSecond: median(limited.map((m) => m.limit!.requestsPerSecond)),
            http: median(limited.map((m) => m.limit!.http)),
            httpCpuUs: optional(limited.map((m) => m.limit!.httpCpuUs)),
            other: other && {
              name: other.name,
              requestsPerSecond: median(limited.map((m) => m.limit!.other!.requestsPerSecond)),
              p50: median(limited.map((m) => m.limit!.other!.p50)),
              p99: median(limited.map((m) => m.limit!.other!.p99)),
              cpuUs: optional(limited.map((m) => m.limit!.other!.cpuUs)),
            },
            cpuUs: optional(limited.map(limitCpu)),
          }
        : undefined,
      koaFloor: all.every((m) => m.koaFloor && m.limit)
        ? {
            requestsPerSecond: median(all.map((m) => m.koaFloor!.requestsPerSecond)),
            cpuUs: optional(all.map((m) => m.koaFloor!.cpuUs)),
            ratio: median(all.map((m) => m.koaFloor!.requestsPerSecond / m.limit!.requestsPerSecond)),
          }
        : undefined,
      ratio: limited.length ? median(limited.map((m) => m.load.requestsPerSecond / m.limit!.requestsPerSecond)) : undefined,
      cpuRatio: limited.length ? optional(limited.map((m) => (m.load.cpuUs === undefined ? undefined : limitCpu(m)! / m.load.cpuUs))) : undefined,
      peakRssBytes: Math.max(...all.map((m) => m.peakRssBytes)),
      rssGrowthBytes: Math.max(...all.map((m) => m.peakRssBytes - m.rssBeforeBytes)),
      responseBytes: all.at(-1)!.responseBytes,
      warnings: [...new Set(all.flatMap((m) => m.warnings))],
    };
  });
}
