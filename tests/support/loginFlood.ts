import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../harness/processes.js';

/** What the flooder is told: where, from which addresses, how many logins each keeps in flight. */
export interface FloodOrders {
  url: string;
  addresses: string[];
  lanes: number;
}

export interface FloodReport {
  /** Attempts sent. */
  sent: number;
  /** How many attempts ended how: a status, or an error. */
  outcomes: Record<string, number>;
  /** The position, from 0, of the first attempt answered 429. */
  firstRefusal?: number;
  /** Attempts checked (401) per address. */
  checked: Record<string, number>;
}

/** What the flooder says over its IPC channel. */
export type FloodMessage = { started: true } | { spent: string } | { report: FloodReport };

export interface Flood {
  /** Resolves once every lane has had an answer: all connections up, the flood under way. */
  started: Promise<void>;
  /** The addresses that have met their failure budget's 429 so far. */
  spent: Set<string>;
  stop(): Promise<FloodReport>;
}

const FLOODER = path.join(ROOT, 'tests/support/loginFlooder.ts');

/**
 * Wrong logins, each for an email nobody has, `lanes` kept in flight from each of `addresses`
 * (keep-alive connections), sent by a process of its own until stopped, as an attacker on another
 * machine would send them.
 */
export function startFlood(orders: FloodOrders): Flood {
  const child = spawn(process.execPath, ['--import', 'tsx', FLOODER, JSON.stringify(orders)], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const spent = new Set<string>();
  let started!: () => void;
  let reported!: (report: FloodReport) => void;
  const whenStarted = new Promise<void>((resolve) => (started = resolve));
  const whenReported = new Promise<FloodReport>((resolve) => (reported = resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`the flooder exited (${code}) before it reported`)),
    ),
  );
  exited.catch(() => undefined);
  child.on('message', (message: FloodMessage) => {
    if ('started' in message) started();
    if ('spent' in message) spent.add(message.spent);
    if ('report' in message) reported(message.report);
  });
  return {
    started: Promise.race([whenStarted, exited]),
    spent,
    stop() {
      child.send('stop');
      return Promise.race([whenReported, exited]);
    },
  };
}
