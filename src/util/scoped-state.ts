/**
 * Where an entity instance was read or written: one token per store and table prefix. State
 * tablekit keeps about an instance (its ETag, its index copies) is only true of that place: the
 * same key in another store or under another prefix is another entity with other versions.
 */
export type StateScope = object;

/** The scope of state recorded outside any store (the mapper's own bookkeeping); any scoped record replaces it. */
export const UNSCOPED: StateScope = Object.freeze({ unscoped: true });

/** One scope's value, or several when an instance travelled between contexts (the latest last). */
type Entry<V> = { scope: StateScope; value: V } | Map<StateScope, V>;

/**
 * Per-instance state kept weakly (it goes with the instance) and per scope, so a context never
 * uses what another context on another store learned; `latest` is what the last one recorded.
 */
export class ScopedState<V> {
  readonly #entries = new WeakMap<object, Entry<V>>();

  /** The value recorded for the instance in `scope`. */
  get(instance: object, scope: StateScope): V | undefined {
    const entry = this.#entries.get(instance);
    if (entry === undefined) return undefined;
    if (entry instanceof Map) return entry.get(scope);
    return entry.scope === scope ? entry.value : undefined;
  }

  /** The value the most recent scope recorded for the instance. */
  latest(instance: object): V | undefined {
    const entry = this.#entries.get(instance);
    if (entry === undefined) return undefined;
    if (!(entry instanceof Map)) return entry.value;
    let last: V | undefined;
    for (const value of entry.values()) last = value;
    return last;
  }

  /** Records (or, with `undefined`, forgets) the instance's value in `scope`. */
  set(instance: object, scope: StateScope, value: V | undefined): void {
    const entry = this.#entries.get(instance);
    // The common case stays one small object per instance: a Map only once a second scope appears.
    if (
      entry === undefined ||
      (!(entry instanceof Map) && (entry.scope === scope || entry.scope === UNSCOPED))
    ) {
      if (value === undefined) this.#entries.delete(instance);
      else this.#entries.set(instance, { scope, value });
      return;
    }
    const map = entry instanceof Map ? entry : new Map([[entry.scope, entry.value]]);
    map.delete(UNSCOPED);
    map.delete(scope);
    if (value !== undefined) map.set(scope, value);
    if (map.size === 0) this.#entries.delete(instance);
    else this.#entries.set(instance, map);
  }
}
