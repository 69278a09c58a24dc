import { afterAll, beforeAll, inject } from 'vitest';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig, type Edge } from '../../server/config.js';
import type { Logger } from '../../server/logger.js';
import { auth, notes8000, notes8080, type Service } from '../../server/services.js';
import type { AuthDeps, NotesDeps } from '../../server/services.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { createScratchDatabase, type ScratchDatabase } from '../../harness/postgres.js';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { startService, type StartedService, type StartOptions } from '../../harness/service.js';

/** The suite's PostgreSQL server, where each test file makes databases of its own. */
export const postgresUrl = () => inject('adminDatabaseUrl');

/** A service on a scratch database of the suite's PostgreSQL (see startService). */
export function startTestService<Deps extends { logger: Logger; edge: Edge; config: unknown }>(
  descriptor: Service<Deps>,
  options: Omit<StartOptions<Deps>, 'postgresUrl'>,
): Promise<StartedService<Deps>> {
  return startService(descriptor, { postgresUrl: postgresUrl(), ...options });
}

/**
 * The three services of a test file, each on a scratch database of its own, configured by `env`
 * as the process would be (hashes of cost 1024 unless said): started side by side before the
 * file's tests, closed after them.
 */
export function useEachService(env: Record<string, string> = {}) {
  const started = {} as {
    notes8080: StartedService<NotesDeps>;
    notes8000: StartedService<NotesDeps>;
    auth: StartedService<AuthDeps>;
  };
  beforeAll(async () => {
    await ensureSpaBuilt();
    const config = loadConfig({ PASSWORD_HASH_COST: '1024', ...env });
    const notes = { deps: { config: config.notes } };
    const [first, second, login] = await Promise.all([
      startTestService(notes8080, notes),
      startTestService(notes8000, notes),
      startTestService(auth, { deps: { config: config.auth, spa: await builtSpa() } }),
    ]);
    Object.assign(started, { notes8080: first, notes8000: second, auth: login });
  });
  afterAll(() => Promise.all(Object.values(started).map((service) => service.close())));
  return started;
}

/** An empty database of its own on the suite's PostgreSQL. */
export function createTestDatabase(): Promise<ScratchDatabase> {
  return createScratchDatabase(postgresUrl(), 'test');
}

/**
 * A data folder for the tests of one file, made before them and removed after them together
 * with any PostgreSQL server still running on it. Returns the folder's path once made.
 */
export function useTemporaryDataDir(): () => string {
  let dir = '';
  beforeAll(async () => {
    dir = await temporaryDataDir();
  });
  afterAll(() => removeDataDir(dir));
  return () => dir;
}

/**
 * The whole process as `npm start` starts it (compiled), on a database and a data folder of its
 * own, with `env` on top. `cleanups` gets how to stop it and remove both, to run in reverse order.
 */
export async function startTestProcess(
  env: Record<string, string>,
  cleanups: (() => Promise<unknown>)[],
): Promise<RunningProcess> {
  const dataDir = await temporaryDataDir();
  cleanups.push(() => removeDataDir(dataDir));
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  env = { DATABASE_URL: database.url, PASSWORD_HASH_COST: '2', ...env };
  const started = await startProcess({ form: 'compiled', dataDir, env });
  cleanups.push(() => started.stop(5_000));
  return started;
}
