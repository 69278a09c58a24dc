import type { Config } from '../server/config.js';
import { databaseUrl, discard, startInstance, type Instance } from './instance.js';
import {
  comparedNotesRound,
  NOTES_SERVICES,
  openServiceTable,
  serviceUrl,
  type NotesService,
} from './notes.js';
import type { Round } from './scenario.js';

/**
 * The instances the comparisons measure beside the main one (all three services in one process,
 * sessions in memory), each started like it (the compiled entry point, with a data folder and
 * database of its own) and measured in the same rounds: the login service keeping its sessions in
 * PostgreSQL, and the notes services served by two workers.
 */

/** The workers comparison's instance; the main instance runs one process (WORKERS=1). */
const WORKERS = '2';
export const WORKERS_VARIANT = `WORKERS=${WORKERS}`;

/** The login service alone, with SESSION_STORE=postgres; `side`: where its /api/me answers. */
export async function startStoreComparison() {
  const instance = await startInstance('compiled', [], {
    SERVICES: 'auth',
    SESSION_STORE: 'postgres',
  });
  return {
    side: { url: instance.process.urls.auth, pid: instance.process.pid },
    stop: () => discard(instance),
  };
}

/**
 * Both notes services in a node:cluster primary with two workers, and each notes table open on it
 * and on the main instance; `services`: each one's comparison round, to run once per round.
 */
export async function startWorkersComparison(
  main: Instance,
  config: Config,
  onPoolError: (error: Error) => void,
) {
  const instance = await startInstance('compiled', [], {
    SERVICES: 'notes8080,notes8000',
    WORKERS,
  });
  const open = async (on: Instance, service: NotesService) =>
    openServiceTable(
      service,
      { url: await databaseUrl(on), poolMax: config.database.poolMax },
      onPoolError,
    );
  const tables = await Promise.all(
    NOTES_SERVICES.map(async (service) => ({
      service,
      main: await open(main, service),
      workers: await open(instance, service),
    })),
  );
  return {
    services: tables.map(({ service, main, workers }) => ({
      label: service.label,
      round: (round: Round) =>
        comparedNotesRound(
          round,
          service,
          {
            variant: 'WORKERS=1',
            url: serviceUrl(round.urls, service),
            pid: round.serverPid,
            table: main,
          },
          {
            variant: WORKERS_VARIANT,
            url: serviceUrl(instance.process.urls, service),
            pid: instance.process.pid,
            table: workers,
          },
        ),
    })),
    async stop() {
      for (const { main, workers } of tables)
        await Promise.all([main.pool.end(), workers.pool.end()]);
      await discard(instance);
    },
  };
}
