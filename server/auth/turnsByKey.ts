/**
 * Runs tasks one at a time per key, in the order they were given: what a task reads and decides
 * cannot interleave with another task of the same key. Only keys with a task pending are held.
 */
export class TurnsByKey {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T> | T): Promise<T> {
    const result = (this.#tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
