import { onTestFinished } from 'vitest';
import { startProcess, type RunningProcess } from '../../harness/processes.js';
import { createTestDatabase } from './services.js';

// What the hostile-load cases (tests/faults/hostileLoad/) share. Each runs the compiled entry
// point, as `npm start` does, on a scratch database, and measures what the defences promise.

export type NotesService = 'notes8080' | 'notes8000';
export const NOTES_SERVICES: NotesService[] = ['notes8080', 'notes8000'];
/** The column and JSON field holding a note's text, per service. */
export const TEXT_FIELD = { notes8080: 'body', notes8000: 'content' } as const;

export const seconds = (ms: number) => (ms / 1000).toFixed(1);
export const range = (count: number) => Array.from({ length: count }, (_, index) => index);

/** Starts the compiled entry point, stopped when the test ends whether it passed or not. */
export async function startServices(
  dataDir: string,
  env: Record<string, string>,
): Promise<RunningProcess> {
  const services = await startProcess({
    dataDir,
    form: 'compiled',
    env: { LOG_LEVEL: 'warn', ...env },
  });
  onTestFinished(async () => void (await services.stop()));
  return services;
}

/** A scratch database of the suite's server, dropped when the test ends (after the process). */
export async function scratchDatabase(): Promise<string> {
  const database = await createTestDatabase();
  onTestFinished(() => database.drop());
  return database.url;
}
