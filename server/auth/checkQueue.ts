/** Checks one client address may have waiting; past it the address is told to come back. */
export const WAITING_PER_ADDRESS = 32;

/**
 * Runs password checks a few at a time. Checks wait in a queue per client address, and the
 * addresses take turns: a flood waits behind itself, so a newcomer waits for at most one check of
 * each address ahead of it, never for the whole crowd. Browsers that proved themselves trusted
 * devices of the account they log in to have turns of their own, served first. No bound counts
 * everyone together: each waiting check is an open request, which the connection limits bound.
 */
export class CheckQueue {
  #running = 0;
  /** Each lane's waiting checks by address, in the order the addresses take turns. */
  readonly #lanes = {
    trusted: new Map<string, (() => void)[]>(),
    other: new Map<string, (() => void)[]>(),
  };

  constructor(private readonly atOnce: number) {}

  /** Whether `address` may queue another check in its lane. */
  hasRoom(address: string, trusted: boolean): boolean {
    return (this.#lane(trusted).get(address)?.length ?? 0) < WAITING_PER_ADDRESS;
  }

  /** Runs `check` in `address`'s turn. */
  async run<T>(address: string, trusted: boolean, check: () => Promise<T>): Promise<T> {
    if (this.#running < this.atOnce) this.#running++;
    else
      await new Promise<void>((start) => {
        const lane = this.#lane(trusted);
        const waiting = lane.get(address);
        if (waiting) waiting.push(start);
        else lane.set(address, [start]);
      });
    try {
      return await check();
    } finally {
      this.#running--;
      this.#startNext();
    }
  }

  #lane(trusted: boolean) {
    return trusted ? this.#lanes.trusted : this.#lanes.other;
  }

  #startNext(): void {
    const lane = this.#lanes.trusted.size > 0 ? this.#lanes.trusted : this.#lanes.other;
    const next = lane.entries().next();
    if (next.done) return;
    const [address, waiting] = next.value;
    // The address goes to the back of the line, if it has more to run.
    lane.delete(address);
    const start = waiting.shift()!;
    if (waiting.length > 0) lane.set(address, waiting);
    // Counted as running at once, so that no newcomer takes its place before it resumes.
    this.#running++;
    start();
  }
}
