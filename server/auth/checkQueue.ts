export const WAITING_PER_ADDRESS = 32;

/**
 * Who waits first: a browser trusted by the account it logs in to, then any attempt at a
 * configured account (which its pair and account limits keep few), then unknown emails.
 */
export type Lane = 'trusted' | 'account' | 'unknown';

/**
 * Runs password checks `atOnce` at a time. Within a lane, checks wait in a queue per client
 * address and the addresses take turns, so a flood waits behind itself.
 */
export class CheckQueue {
  #running = 0;
  readonly #lanes: Record<Lane, Map<string, (() => void)[]>> = {
    trusted: new Map(),
    account: new Map(),
    unknown: new Map(),
  };

  constructor(private readonly atOnce: number) {}

  hasRoom(address: string, lane: Lane): boolean {
    return (this.#lanes[lane].get(address)?.length ?? 0) < WAITING_PER_ADDRESS;
  }

  async run<T>(address: string, lane: Lane, check: () => Promise<T>): Promise<T> {
    if (this.#running < this.atOnce) this.#running++;
    else
      await new Promise<void>((start) => {
        const waiting = this.#lanes[lane].get(address) ?? [];
        this.#lanes[lane].set(address, [...waiting, start]);
      });
    try {
      return await check();
    } finally {
      this.#running--;
      this.#startNext();
    }
  }

  #startNext(): void {
    const lane = Object.values(this.#lanes).find((waiting) => waiting.size > 0);
    const [address, [start, ...others]] = lane?.entries().next().value ?? ['', []];
    if (!lane || !start) return;
    // The address goes to the back of the line.
    lane.delete(address);
    if (others.length > 0) lane.set(address, others);
    // Counted as running now, so that no newcomer takes its place before it resumes.
    this.#running++;
    start();
  }
}
