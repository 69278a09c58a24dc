import { discard, startInstance } from './instance.js';

/**
 * The instances the comparisons measure beside the main one (all three services in one process,
 * sessions in memory), each started like it (the compiled entry point, with a data folder and
 * database of its own) and measured in the same rounds: the login service keeping its sessions in
 * PostgreSQL.
 */

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
