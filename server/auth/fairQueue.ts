import { HttpError } from '../http/errors.js';
import { messages } from './messages.js';

export interface FairQueueLimits {
  /** Checks that run at once. */
  running: number;
  /** Checks that wait, all clients together; past it a check is refused with 503. */
  waiting: number;
}

/** A check refused because too many wait already: 503 with `Retry-After: 1`. */
export class QueueFullError extends HttpError {
  constructor() {
    super(503, messages.busy, { 'Retry-After': '1' });
  }
}

/**
 * Runs expensive checks a few at a time, and serves those waiting round-robin across clients:
 * each client has a queue of its own, and when a check ends the next client in turn starts its
 * oldest one. A client that sends many checks waits behind itself, not in front of everyone
 * else, so one busy client delays another by at most one of its checks per turn.
 */
export class FairQueue {
  #running = 0;
  #waitingCount = 0;
  /**
   * Each waiting client's queue, in the order the clients take turns (a Map keeps insertion order).
   */
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limits: FairQueueLimits) {}

  /**
   * Runs `check` for `client` when its turn comes; throws 503 (`Retry-After: 1`) when too many wait
   * already.
   */
  async run<T>(client: string, check: () => Promise<T>): Promise<T> {
    if (this.#running < this.limits.running) this.#running++;
    else if (this.#waitingCount >= this.limits.waiting) throw new QueueFullError();
    else await this.#turnOf(client);
    try {
      return await check();
    } finally {
      this.#running--;
      this.#startNext();
    }
  }

  /** Resolves when `client`'s turn comes, already counted as running. */
  #turnOf(client: string): Promise<void> {
    this.#waitingCount++;
    return new Promise((start) => {
      const queue = this.#waiting.get(client);
      if (queue) queue.push(start);
      else this.#waiting.set(client, [start]);
    });
  }

  #startNext(): void {
    const next = this.#waiting.entries().next();
    if (next.done) return;
    const [client, queue] = next.value;
    const start = queue.shift()!;
    // The client goes to the back of the line, if it has more to run.
    this.#waiting.delete(client);
    if (queue.length > 0) this.#waiting.set(client, queue);
    this.#waitingCount--;
    // Counted as running at once, so that no newcomer takes its place before it resumes.
    this.#running++;
    start();
  }
}
