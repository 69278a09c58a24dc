/**
 * The login attempts of each client in progress in this process, from their admission to their
 * answer, at most `perClient` at once: one client cannot fill the password checks' queue, and an
 * attempt past its share is refused before it costs a database statement or a password check.
 * The table holds only clients with an attempt in progress, so it is bounded by the connections.
 */
export class AttemptsInFlight {
  readonly #counts = new Map<string, number>();

  constructor(private readonly perClient: number) {}

  /**
   * Takes a place for an attempt of `client`: false when it has `perClient` in progress already.
   */
  take(client: string): boolean {
    const count = this.#counts.get(client) ?? 0;
    if (count >= this.perClient) return false;
    this.#counts.set(client, count + 1);
    return true;
  }

  /** The attempt has been answered. */
  release(client: string): void {
    const count = (this.#counts.get(client) ?? 0) - 1;
    if (count > 0) this.#counts.set(client, count);
    else this.#counts.delete(client);
  }
}
