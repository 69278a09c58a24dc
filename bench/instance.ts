import { embeddedPostgresUrl } from '../server/db/embeddedPostgres.js';
import { createScratchDatabase } from '../harness/postgres.js';
import {
  removeDataDir,
  startProcess,
  temporaryDataDir,
  type ProcessOptions,
  type RunningProcess,
} from '../harness/processes.js';

/**
 * The services under test, started as `npm start` starts them, on a data folder of their own.
 * With DATABASE_URL set they also get a throwaway database on that server (so a benchmark never
 * touches real notes); otherwise they run their embedded PostgreSQL in the folder.
 */

/**
 * One log line per request would dominate the measurement, so logging is turned down; the
 * password hash cost stays at its default, as a plain `npm start` has it (empty counts as unset).
 */
export const SERVICE_ENV = { LOG_LEVEL: 'warn', PASSWORD_HASH_COST: '' };

export interface Instance {
  process: RunningProcess;
  dataDir: string;
  scratchUrl?: string;
}

// What this run started and has not removed yet, for a run that ends early.
const running = new Set<RunningProcess>();
const removals = new Map<string, () => Promise<void>>();

async function newPlace(): Promise<Omit<Instance, 'process'>> {
  const dataDir = await temporaryDataDir();
  const scratch = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'bench')
    : undefined;
  removals.set(dataDir, async () => {
    removals.delete(dataDir);
    await scratch?.drop();
    await removeDataDir(dataDir);
  });
  return { dataDir, scratchUrl: scratch?.url };
}

async function launch(
  place: Omit<Instance, 'process'>,
  form: ProcessOptions['form'],
  nodeFlags: string[] = [],
  settings: Record<string, string> = {},
): Promise<Instance> {
  const env = { ...SERVICE_ENV, DATABASE_URL: place.scratchUrl ?? '', ...settings };
  const started = await startProcess({ dataDir: place.dataDir, form, nodeFlags, env });
  running.add(started);
  void started.exited.then(() => running.delete(started));
  return { ...place, process: started };
}

/**
 * `compiled`: what `npm start` runs, without npm, so that Node flags can be added; `settings`:
 * variables beside SERVICE_ENV (SERVICES, WORKERS, …).
 */
export async function startInstance(
  form: ProcessOptions['form'],
  nodeFlags?: string[],
  settings?: Record<string, string>,
): Promise<Instance> {
  return launch(await newPlace(), form, nodeFlags, settings);
}

/**
 * Stops the services (throws unless they ended cleanly) and removes their data folder and database.
 */
export async function discard(instance: Instance, { keepData = false } = {}): Promise<void> {
  try {
    const ended = await instance.process.stop();
    if (ended !== 0)
      throw new Error(
        `the services ended with ${ended}:\n${instance.process.output().slice(-2000)}`,
      );
  } finally {
    if (!keepData) await removals.get(instance.dataDir)?.();
  }
}

export async function discardAll(): Promise<void> {
  await Promise.allSettled([...running].map((started) => started.stop()));
  await Promise.allSettled([...removals.values()].map((remove) => remove()));
}

/** Where the benchmark itself connects to the instance's database. */
export async function databaseUrl({ dataDir, scratchUrl }: Instance): Promise<string> {
  return scratchUrl ?? embeddedPostgresUrl(dataDir);
}

/**
 * `npm start` as a user runs it, timed from the command until all three ports answer HTTP:
 * cold with an empty data folder (the database cluster is created), then warm on the same
 * folder. At the default log level: under npm, the process's lines are the only word of where
 * its services listen.
 */
export async function measureStartup(
  runs: number,
): Promise<{ coldMs: number[]; warmMs: number[] }> {
  const coldMs: number[] = [];
  const warmMs: number[] = [];
  const announcing = { LOG_LEVEL: 'info' };
  for (let run = 1; run <= runs; run++) {
    const cold = await launch(await newPlace(), 'npm', [], announcing);
    coldMs.push(cold.process.startMs);
    await discard(cold, { keepData: true });
    const warm = await launch(cold, 'npm', [], announcing);
    warmMs.push(warm.process.startMs);
    await discard(warm);
  }
  return { coldMs, warmMs };
}
