import { StartupError } from './http/errors.js';
import type { Logger } from './logger.js';

/** Where each server listens, as the process reports it to the one that started it. */
export type Listening = { name: string; url: string }[];

/** Whether an IPC message is a started process saying where it listens. */
export const isListening = (message: unknown): message is { listening: Listening } =>
  Array.isArray((message as { listening?: unknown } | null)?.listening);

/** Longest a stop may take, beyond its drain, before the process exits anyway. */
export const STOP_DEADLINE_MS = 12_000;

/**
 * The process's life: what was started is stopped in the reverse order, once, on SIGINT,
 * SIGTERM or SIGHUP (a closed terminal), or when the npm process that started it is gone (npm
 * killed, its terminal closed), then the process exits.
 */
export class Lifecycle {
  readonly #closers: (() => Promise<unknown>)[] = [];
  #stopping: Promise<never> | undefined;

  /**
   * `drainMs`: how long a stop keeps serving first (SHUTDOWN_DRAIN_MS), which the deadline allows
   * for.
   */
  constructor(
    private readonly logger: Logger,
    private readonly drainMs = 0,
  ) {
    // `on`, not `once`: Ctrl-C can deliver SIGINT twice (the terminal's, and npm's forwarded
    // copy); the second must not end the process half-way through its shutdown.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
      process.on(signal, () => void this.stop(signal));
    if (process.env.npm_lifecycle_event) this.#watchParent();
  }

  /** Runs `close` when the process stops, before whatever was deferred earlier. */
  defer(close: () => Promise<unknown>): void {
    this.#closers.push(close);
  }

  /** Whether the process has begun to stop. */
  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  stop(reason: string): Promise<never> {
    if (this.#stopping) return this.#stopping;
    this.logger.info({ reason }, 'shutting down');
    return this.#finish(0, () => this.logger.info('stopped'));
  }

  /**
   * A start that could not finish: the person reads why (one line, no stack, unless it is a
   * bug), what was started is stopped quietly, and the process exits with status 1.
   */
  failed(error: unknown): Promise<never> {
    if (error instanceof StartupError) process.stderr.write(`${error.message}\n`);
    else this.logger.fatal({ err: error }, 'start-up failed');
    return this.#finish(1);
  }

  #finish(exitCode: number, done?: () => void): Promise<never> {
    this.#stopping ??= (async () => {
      setTimeout(() => {
        this.logger.error(
          `shutdown took longer than ${STOP_DEADLINE_MS + this.drainMs} ms; exiting`,
        );
        process.exit(1);
      }, STOP_DEADLINE_MS + this.drainMs).unref();
      for (const close of this.#closers.reverse()) {
        await close().catch((error: unknown) =>
          this.logger.error({ err: error }, 'a step of the shutdown failed'),
        );
      }
      done?.();
      process.exit(exitCode);
    })();
    return this.#stopping;
  }

  /**
   * npm forwards SIGINT and SIGTERM to the server, but not SIGHUP, and nothing when it is killed.
   */
  #watchParent(): void {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent)
        void this.stop('the npm process that started the server is gone');
    }, 500).unref();
  }
}
