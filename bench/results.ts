import type { LoadResult } from './load.js';

/** One scenario measured once (one round). */
export interface Measurement {
  /** Stable key, e.g. `notes-8080 GET /notes/{id}`. */
  id: string;
  service: string;
  scenario: string;
  connections: number;
  load: LoadResult;
  /** What this machine could do for the same work, if a limit applies. */
  limit?: Limit;
  /** Koa alone answering the same requests (one middleware, a fixed body), where measured. */
  koaFloor?: { requestsPerSecond: number; cpuUs?: number };
  rssBeforeBytes: number;
  peakRssBytes: number;
  /** Size of one response body, for list scenarios. */
  responseBytes?: number;
  /** Problems of the measurement itself (e.g. ran out of seeded notes). */
  warnings: string[];
}

export interface Limit {
  /** `http`: the bare HTTP limit; `composed`: 1/(1/HTTP + 1/other). */
  kind: 'http' | 'composed';
  requestsPerSecond: number;
  http: number;
  /** CPU the bare HTTP server spent per request (µs). */
  httpCpuUs?: number;
  /** The non-HTTP part and what it is. */
  other?: { name: 'database' | 'password hash'; requestsPerSecond: number; p50: number; p99: number; cpuUs?: number };
}

export interface StartupTimes {
  coldMs: number[];
  warmMs: number[];
}

export interface SpaReport {
  files: { file: string; rawBytes: number; gzipBytes: number }[];
  rawBytes: number;
  gzipBytes: number;
  /** Login page load to interactive, one value per fresh browser context (ms). */
  timeToInteractiveMs: number[];
}

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  os: string;
  node: string;
  postgres: string;
  date: string;
  /** 1-minute load averages when the load rounds began and ended: other work on the machine skews the numbers. */
  loadAverage: { before: number; after?: number };
}
