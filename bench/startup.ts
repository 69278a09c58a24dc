import { benchDatabase, type BenchDatabase } from './database.js';
import type { StartupTimes } from './results.js';
import { removeDataDir, startServices, temporaryDataDir, type RunningServices } from './services.js';

/** Services running on their own data folder (and database), with what it takes to clean up. */
export interface Instance {
  services: RunningServices;
  dataDir: string;
  database: BenchDatabase;
}

/**
 * `npm start` as a user runs it, timed from the command until all three ports answer HTTP:
 * cold with an empty data folder (the database cluster is created), then warm on the same
 * folder. The last warm start is left running for the load rounds.
 */
export async function measureStartup(runs: number): Promise<{ times: StartupTimes; running: Instance }> {
  const times: StartupTimes = { coldMs: [], warmMs: [] };
  for (let run = 1; ; run++) {
    const dataDir = await temporaryDataDir();
    const database = await benchDatabase(dataDir);
    try {
      const cold = await startServices({ dataDir, via: 'npm', databaseUrl: database.serviceUrl });
      times.coldMs.push(cold.startMs);
      await cold.stop();
      const warm = await startServices({ dataDir, via: 'npm', databaseUrl: database.serviceUrl });
      times.warmMs.push(warm.startMs);
      if (run === runs) return { times, running: { services: warm, dataDir, database } };
      await warm.stop();
    } catch (error) {
      await discard({ dataDir, database });
      throw error;
    }
    await discard({ dataDir, database });
  }
}

export async function discard({ dataDir, database }: Pick<Instance, 'dataDir' | 'database'>): Promise<void> {
  await database.drop();
  await removeDataDir(dataDir);
}
