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
 * Per-instance state that goes with the instance, kept per scope, so a context never uses what
 * another context on another store learned; `latest` is what the last one recorded.
 *
 * The entry lives on the instance itself under a private, non-enumerable symbol (invisible to
 * `Object.keys`, spreads, JSON and equality checks): every row a scan maps records its ETag, and
 * adding a new key to a WeakMap costs several microseconds per row (measured in the mapping bench),
 * a property a few dozen nanoseconds. Objects that cannot take a property (frozen, sealed) use a WeakMap.
 */
export class ScopedState<V> {
  readonly #slot = Symbol("tablekit.state");
  /** Entries of objects that cannot take a property; `null` hides a slot set before they were frozen. */
  readonly #fallback = new WeakMap<object, Entry<V> | null>();

  #entry(instance: object): Entry<V> | undefined {
    const own = (instance as Record<symbol, Entry<V> | undefined>)[this.#slot];
    if (Object.isExtensible(instance)) return own;
    const kept = this.#fallback.get(instance);
    return kept === null ? undefined : (kept ?? own);
  }

  #store(instance: object, entry: Entry<V> | undefined): void {
    const slot = this.#slot;
    if (!Object.isExtensible(instance)) {
      // Frozen or sealed: its slot (if any) can no longer change; the WeakMap overrides it.
      if (entry === undefined && !Object.hasOwn(instance, slot)) this.#fallback.delete(instance);
      else this.#fallback.set(instance, entry ?? null);
    } else if (Object.hasOwn(instance, slot)) {
      (instance as Record<symbol, Entry<V> | undefined>)[slot] = entry;
    } else if (entry !== undefined) {
      Object.defineProperty(instance, slot, { value: entry, writable: true, configurable: true });
    }
  }

  /** The value recorded for the instance in `scope`. */
  get(instance: object, scope: StateScope): V | undefined {
    const entry = this.#entry(instance);
    if (entry === undefined) return undefined;
    if (entry instanceof Map) return entry.get(scope);
    return entry.scope === scope ? entry.value : undefined;
  }

  /** The value the most recent scope recorded for the instance. */
  latest(instance: object): V | undefined {
    const entry = this.#entry(instance);
    if (entry === undefined) return undefined;
    if (!(entry instanceof Map)) return entry.value;
    let last: V | undefined;
    for (const value of entry.values()) last = value;
    return last;
  }

  /** Records (or, with `undefined`, forgets) the instance's value in `scope`. */
  set(instance: object, scope: StateScope, value: V | undefined): void {
    const entry = this.#entry(instance);
    // The common case stays one small object per instance: a Map only once a second scope appears.
    if (
      entry === undefined ||
      (!(entry instanceof Map) && (entry.scope === scope || entry.scope === UNSCOPED))
    ) {
      this.#store(instance, value === undefined ? undefined : { scope, value });
      return;
    }
    const map = entry instanceof Map ? entry : new Map([[entry.scope, entry.value]]);
    map.delete(UNSCOPED);
    map.delete(scope);
    if (value !== undefined) map.set(scope, value);
    this.#store(instance, map.size === 0 ? undefined : map);
  }
}
