/**
 * What a computation gives for each of the few values that requests repeat (a Content-Type, a
 * Host), kept for a few dozen of them and forgotten together when clients send more: a client
 * sending a new value with every request costs the computation each time, never memory.
 */
export class FewValues<V> {
  readonly #kept = new Map<string, V>();

  constructor(private readonly most = 64) {}

  /** What `find(arg)` gave for `key` before, or gives now. */
  of<A>(key: string, find: (arg: A) => V, arg: A): V {
    let value = this.#kept.get(key);
    if (value === undefined) {
      if (this.#kept.size >= this.most) this.#kept.clear();
      value = find(arg);
      this.#kept.set(key, value);
    }
    return value;
  }
}
