import type { HttpLoad } from './load.js';
import { measureScenario, type Comparison, type Measurement, type Round } from './scenario.js';

/**
 * Scenarios measured on two servers side by side: the service and the peer (bench/peer.ts), or
 * the main instance and a comparison's instance (bench/compare.ts).
 */

/**
 * The connections of every scenario measured on two sides, as the published comparison with the
 * peer used.
 */
export const SIDE_BY_SIDE_CONNECTIONS = 16;

/** Where one side's requests go, and the process whose CPU they spend. */
export interface Side {
  url: string;
  pid: number;
}

/** A load's requests, its address and connections aside. */
export type Requests = Omit<HttpLoad, 'url' | 'connections'>;

/**
 * One side's run of a scenario: its requests, readied right before the pair runs, and what sets it
 * apart in a comparison.
 */
export interface SideRun {
  side: Side;
  ready(): Promise<Requests>;
  comparison?: Comparison;
}

/**
 * One scenario on two sides back to back, on SIDE_BY_SIDE_CONNECTIONS each: both readied first,
 * then measured, the first run first in odd rounds and the second in even ones, so that neither
 * always meets the machine as the other left it. The measurements come in the order of `runs`.
 */
export async function backToBack(
  round: Round,
  what: { service: string; scenario: string },
  runs: [SideRun, SideRun],
): Promise<[Measurement, Measurement]> {
  const requests = [await runs[0].ready(), await runs[1].ready()];
  const measured: Measurement[] = [];
  for (const index of round.number % 2 === 1 ? [0, 1] : [1, 0]) {
    const { side, comparison } = runs[index]!;
    const load = { url: side.url, ...requests[index]!, connections: SIDE_BY_SIDE_CONNECTIONS };
    measured[index] = await measureScenario(side.pid, round.timing, { ...what, load, comparison });
  }
  return [measured[0]!, measured[1]!];
}

/**
 * The service's measurement of a scenario, with the peer's run of the same scenario in the same
 * round beside it.
 */
export async function againstPeer(
  round: Round,
  what: { service: string; scenario: string },
  service: SideRun,
  peer: SideRun,
): Promise<Measurement> {
  const [measured, peerMeasured] = await backToBack(round, what, [service, peer]);
  return {
    ...measured,
    peer: peerMeasured.load,
    warnings: [
      ...measured.warnings,
      ...peerMeasured.warnings.map((warning) => `the peer's run: ${warning}`),
    ],
  };
}
