import { StartupError } from './http/errors.js';
import type { Logger } from './logger.js';

/** Where each server listens, as the process tells the one that started it. */
export type Listening = { name: string; url: string }[];

export const isListening = (message: unknown): message is { listening: Listening } =>
  Array.isArray((message as { listening?: unknown } | null)?.listening);

/** Longest a stop may take, beyond its drain, before the process exits anyway. */
export const STOP_DEADLINE_MS = 12_000;

/** Stops what was started, once and in reverse order, on a signal or when npm is gone. */
export class Lifecycle {
  readonly #closers: (() => Promise<unknown>)[] = [];
  #stopping?: Promise<never>;

  constructor(
    private readonly logger: Logger,
    private readonly drainMs: number,
  ) {
    // `on`, not `once`: Ctrl-C can deliver SIGINT twice (the terminal's, and npm's copy).
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
      process.on(signal, () => void this.stop(signal));
    // npm forwards neither SIGHUP nor its own death.
    if (process.env.npm_lifecycle_event) {
      const parent = process.ppid;
      setInterval(() => {
        if (process.ppid !== parent)
          void this.stop('the npm process that started the server is gone');
      }, 500).unref();
    }
  }

  /** Runs `close` when the process stops, before whatever was deferred earlier. */
  defer(close: () => Promise<unknown>): void {
    this.#closers.push(close);
  }

  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  stop(reason: string): Promise<never> {
    if (!this.#stopping) this.logger.info({ reason }, 'shutting down');
    return this.#finish(0, () => this.logger.info('stopped'));
  }

  /** A start that could not finish: one line for a person (a stack only for a bug), exit 1. */
  failed(error: unknown): Promise<never> {
    if (error instanceof StartupError) process.stderr.write(`${error.message}\n`);
    else this.logger.fatal({ err: error }, 'start-up failed');
    return this.#finish(1);
  }

  #finish(exitCode: number, done?: () => void): Promise<never> {
    this.#stopping ??= (async () => {
      const deadline = STOP_DEADLINE_MS + this.drainMs;
      setTimeout(() => {
        this.logger.error(`shutdown took longer than ${deadline} ms; exiting`);
        process.exit(1);
      }, deadline).unref();
      for (const close of this.#closers.reverse())
        await close().catch((error: unknown) =>
          this.logger.error({ err: error }, 'a step of the shutdown failed'),
        );
      done?.();
      process.exit(exitCode);
    })();
    return this.#stopping;
  }
}
