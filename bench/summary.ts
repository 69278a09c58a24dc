import type { LoadResult } from './load.js';
import type { Comparison, Measurement } from './scenario.js';

/** NaN when a value is: a figure some round lacks is not known. */
export function median(values: number[]): number {
  if (values.length === 0 || values.some(Number.isNaN)) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const NOT_MEASURED: LoadResult = {
  requestsPerSecond: NaN,
  p50: NaN,
  p99: NaN,
  mean: NaN,
  errors: 0,
  requests: 0,
  cpuUs: NaN,
};

/**
 * One round's figures of a scenario; NaN for the `against` figures unless it is compared with
 * `baseline`.
 */
function figuresOf({ load }: Measurement, baseline = NOT_MEASURED) {
  return {
    requestsPerSecond: load.requestsPerSecond,
    p50: load.p50,
    p99: load.p99,
    mean: load.mean,
    /** Server CPU per request (µs). */
    cpuUs: load.cpuUs,
    /**
     * A comparison's baseline in the same round (its req/s and CPU per request), and this side's
     * over the baseline's.
     */
    againstRequestsPerSecond: baseline.requestsPerSecond,
    againstCpuUs: baseline.cpuUs,
    againstRatio: load.requestsPerSecond / baseline.requestsPerSecond,
    againstCpuRatio: load.cpuUs / baseline.cpuUs,
  };
}

type Figures = Pick<LoadResult, 'requestsPerSecond' | 'cpuUs'>;
const rateAndCpu = ({ requestsPerSecond, cpuUs }: LoadResult): Figures => ({
  requestsPerSecond,
  cpuUs,
});

/** A scenario against the peer over all rounds. */
export interface PeerSummary {
  /** The peer's medians. */
  requestsPerSecond: number;
  cpuUs: number;
  /** The service's median req/s over the peer's, and its median CPU per request over the peer's. */
  ratio: number;
  cpuRatio: number;
  errors: number;
  /** Each round's figures of both, in the order the rounds ran. */
  rounds: { service: Figures; peer: Figures }[];
}

/** A scenario over all rounds: the median of each figure, worst case for errors and memory. */
export type Summary = ReturnType<typeof figuresOf> & {
  id: string;
  service: string;
  scenario: string;
  connections: number;
  /** All rounds together. */
  errors: number;
  /** Of the load beside the measured one, all rounds together. */
  alongsideErrors: number;
  peakRssBytes: number;
  /** Highest peak minus the RSS just before the scenario, over the rounds. */
  rssGrowthBytes: number;
  responseBytes?: number;
  warnings: string[];
  comparison?: Comparison;
  peer?: PeerSummary;
};

function peerSummary(all: Measurement[], service: Figures): PeerSummary | undefined {
  const rounds = all.flatMap(({ load, peer }) =>
    peer ? [{ service: rateAndCpu(load), peer: rateAndCpu(peer) }] : [],
  );
  if (rounds.length === 0) return undefined;
  const requestsPerSecond = median(rounds.map((round) => round.peer.requestsPerSecond));
  const cpuUs = median(rounds.map((round) => round.peer.cpuUs));
  return {
    requestsPerSecond,
    cpuUs,
    ratio: service.requestsPerSecond / requestsPerSecond,
    cpuRatio: service.cpuUs / cpuUs,
    errors: all.reduce((sum, m) => sum + (m.peer?.errors ?? 0), 0),
    rounds,
  };
}

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
    const { id, service, scenario, connections, comparison } = all[0]!;
    const figures = pairs.map((pair) => figuresOf(pair.measurement, pair.baseline));
    const medians = Object.fromEntries(
      Object.keys(figures[0]!).map((key) => [
        key,
        median(figures.map((f) => f[key as keyof typeof f])),
      ]),
    ) as ReturnType<typeof figuresOf>;
    return {
      ...medians,
      id,
      service,
      scenario,
      connections,
      errors: all.reduce((sum, m) => sum + m.load.errors, 0),
      alongsideErrors: all.reduce((sum, m) => sum + m.alongsideErrors, 0),
      peakRssBytes: Math.max(...all.map((m) => m.peakRssBytes)),
      rssGrowthBytes: Math.max(...all.map((m) => m.peakRssBytes - m.rssBeforeBytes)),
      responseBytes: all.at(-1)!.responseBytes,
      warnings: [...new Set(all.flatMap((m) => m.warnings))],
      comparison,
      peer: peerSummary(all, medians),
    };
  });
}
