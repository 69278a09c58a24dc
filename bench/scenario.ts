import { rssBytes, sampleRss, type ServiceUrls } from '../harness/processes.js';
import {
  measureHttp,
  measureHttpTogether,
  type HttpLoad,
  type LoadResult,
  type Timing,
} from './load.js';
import { SeededIds } from './wrkScript.js';

/** What every scenario of one round shares: where the services are, and how long each run lasts. */
export interface Round {
  /** From 1; which side of a pair goes first alternates with it (bench/sides.ts). */
  number: number;
  urls: ServiceUrls;
  serverPid: number;
  timing: Timing;
}

/** One scenario measured once (one round). */
export interface Measurement {
  /** The same in every round, e.g. `notes-8080 GET /notes/{id}`. */
  id: string;
  service: string;
  scenario: string;
  connections: number;
  load: LoadResult;
  /**
   * The peer's run of the same scenario in the same round, when it is measured against the peer.
   */
  peer?: LoadResult;
  /**
   * Errors of the load run beside the measured one (the logins beside reads), which is not measured
   * itself.
   */
  alongsideErrors: number;
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** Size of one response body, for list scenarios. */
  responseBytes?: number;
  /** Problems of the measurement itself (ran out of seeded notes, say). */
  warnings: string[];
  /**
   * Set for a comparison's measurements, which are shown in their own table rather than the
   * scenario table.
   */
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

export const measurementId = (service: string, scenario: string, comparison?: Comparison) =>
  `${service} ${scenario}${comparison ? ` (${comparison.variant})` : ''}`;

/**
 * Runs one HTTP scenario against the server of `serverPid` while watching its memory.
 * `alongside`: another load running at the same time, not measured itself.
 */
export async function measureScenario(
  serverPid: number,
  timing: Timing,
  spec: {
    service: string;
    scenario: string;
    load: HttpLoad;
    alongside?: HttpLoad;
    comparison?: Comparison;
  },
): Promise<Measurement> {
  const { service, scenario, load, alongside, comparison } = spec;
  const rssBeforeBytes = await rssBytes(serverPid);
  const sampler = sampleRss(serverPid);
  const [result, beside] = alongside
    ? await measureHttpTogether([load, alongside], timing)
    : [await measureHttp(load, timing, serverPid)];
  const peakRssBytes = await sampler.stop();
  const warnings: string[] = [];
  if (load.ids instanceof SeededIds && load.ids.shortBy > 0)
    warnings.push(`ran out of seeded notes (${load.ids.shortBy} requests)`);
  const alongsideErrors = beside?.errors ?? 0;
  if (alongsideErrors > 0)
    warnings.push(
      `${alongsideErrors} errors in ` +
        `the ${alongside!.method ?? 'GET'} ${alongside!.path} load beside it`,
    );
  return {
    id: measurementId(service, scenario, comparison),
    service,
    scenario,
    connections: load.connections,
    load: result!,
    alongsideErrors,
    rssBeforeBytes,
    peakRssBytes,
    warnings,
    comparison,
  };
}
