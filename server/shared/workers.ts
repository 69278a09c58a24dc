import cluster, { type Worker } from 'node:cluster';
import { StartupError } from './errors.js';
import type { Logger } from './logger.js';

/** Where each service of a worker listens, as the worker reports it once it does. */
export type Listening = { name: string; url: string }[];

interface ListeningMessage {
  kind: 'listening';
  listening: Listening;
}

/**
 * Tells the process that started this one, over its IPC channel when it has one, where each
 * service listens once all of them do: a worker tells its primary (see startWorkers); a process
 * started with a channel (by a supervisor, or the tests with ports of 0) learns the ports the
 * system chose.
 */
export function reportListening(listening: Listening): void {
  const message: ListeningMessage = { kind: 'listening', listening };
  process.send?.(message);
}

export const isListening = (message: unknown): message is ListeningMessage =>
  (message as { kind?: unknown } | null)?.kind === 'listening';

export interface Workers {
  listening: Listening;
  /**
   * Asks every worker to stop (SIGTERM: each drains its connections) and waits until all have
   * exited.
   */
  stop(): Promise<void>;
}

/**
 * A worker that dies sooner than this after it started is replaced after a growing delay, so a
 * crash loop does not spin.
 */
const HEALTHY_AFTER_MS = 10_000;
const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 30_000;

/**
 * Runs `count` cluster workers of this program, which share each listening socket. The first
 * starts alone, so that a start that cannot succeed (a port in use, say) is reported once, by
 * it; the others start once it listens. Rejects when a worker exits before it listens. Later, a
 * worker that dies is replaced. The primary accepts connections and hands them to the workers in
 * turn (Node's round-robin): a connection handed to a worker at the instant it crashes is lost
 * with it, and its client waits for its own timeout.
 */
export async function startWorkers({
  count,
  env,
  logger,
}: {
  count: number;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}): Promise<Workers> {
  let stopping = false;
  let retryMs = FIRST_RETRY_MS;

  const fork = (): Promise<Listening> => {
    const startedAt = Date.now();
    const worker = cluster.fork(env);
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: unknown) => {
        if (!isListening(message)) return;
        ready = true;
        resolve(message.listening);
      });
      worker.on('exit', (code, signal) => {
        if (!ready)
          return reject(
            new StartupError(
              `A worker exited before it could serve (${signal ?? `status ${code}`})`,
            ),
          );
        if (stopping) return;
        const lived = Date.now() - startedAt;
        retryMs = lived < HEALTHY_AFTER_MS ? Math.min(retryMs * 2, LAST_RETRY_MS) : FIRST_RETRY_MS;
        const delay = lived < HEALTHY_AFTER_MS ? retryMs : 0;
        logger.warn(
          { workerPid: worker.process.pid, code, signal, replacedInMs: delay },
          'a worker died; starting another',
        );
        setTimeout(() => void replace(), delay);
      });
    });
  };

  const replace = async () => {
    if (stopping) return;
    await fork().catch((error: unknown) => {
      logger.error({ err: (error as Error).message }, 'a replacement worker could not start');
      if (!stopping) setTimeout(() => void replace(), retryMs);
    });
  };

  const listening = await fork();
  await Promise.all(Array.from({ length: count - 1 }, fork)).catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });

  async function stopAll(): Promise<void> {
    stopping = true;
    const running = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && !worker.isDead(),
    );
    await Promise.all(
      running.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.once('exit', () => resolve());
            worker.process.kill('SIGTERM');
          }),
      ),
    );
  }

  return { listening, stop: stopAll };
}
