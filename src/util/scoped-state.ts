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

/** How one `ScopedState` reads and writes its slot on an instance. */
interface Slot<V> {
  has(instance: object): boolean;
  get(instance: object): Entry<V> | undefined;
  set(instance: object, entry: Entry<V> | undefined): void;
  /** Adds the slot to an extensible instance that has none. */
  add(instance: object, entry: Entry<V>): void;
}

/** A constructor that returns the object it is given: a subclass's private field is added to that object. */
class Stamp {
  constructor(instance: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the way to add a private field to an existing object
    return instance;
  }
}

/** A slot of its own: a private field (each call makes a new class, so a new private name). */
function privateSlot<V>(): Slot<V> {
  class Holder extends Stamp {
    #entry: Entry<V> | undefined;
    constructor(instance: object, entry: Entry<V>) {
      super(instance);
      this.#entry = entry;
    }
    static has(instance: object): boolean {
      return #entry in instance;
    }
    static get(instance: object): Entry<V> | undefined {
      return (instance as Holder).#entry;
    }
    static set(instance: object, entry: Entry<V> | undefined): void {
      (instance as Holder).#entry = entry;
    }
  }
  return {
    has: Holder.has,
    get: Holder.get,
    set: Holder.set,
    add: (instance, entry) => {
      new Holder(instance, entry);
    },
  };
}

/**
 * Per-instance state that goes with the instance, kept per scope, so a context never uses what
 * another context on another store learned; `latest` is what the last one recorded.
 *
 * The entry lives on the instance itself in a private field (invisible to `Object.keys`, symbols,
 * spreads, JSON, cloning and equality checks): every row a scan maps records its ETag, and adding a
 * new key to a WeakMap costs several microseconds per row, a non-enumerable symbol property
 * (`Object.defineProperty`) about 450 ns, a private field a few dozen (measured in the mapping bench).
 * A private field, once there, stays writable when the instance is frozen; an instance that is not
 * extensible before its first record uses a WeakMap.
 */
export class ScopedState<V> {
  readonly #slot: Slot<V> = privateSlot<V>();
  /** Entries of objects that were not extensible when first recorded. */
  readonly #fallback = new WeakMap<object, Entry<V>>();

  #entry(instance: object): Entry<V> | undefined {
    const slot = this.#slot;
    if (slot.has(instance)) return slot.get(instance);
    // Only an instance that was not extensible when first recorded has an entry in the WeakMap.
    return Object.isExtensible(instance) ? undefined : this.#fallback.get(instance);
  }

  #store(instance: object, entry: Entry<V> | undefined): void {
    const slot = this.#slot;
    if (slot.has(instance)) slot.set(instance, entry);
    else if (entry === undefined) this.#fallback.delete(instance);
    else if (Object.isExtensible(instance)) slot.add(instance, entry);
    else this.#fallback.set(instance, entry);
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

  /**
   * Records the value of an instance that has none yet and is extensible (one the mapper has just
   * made): no lookup first.
   */
  setFresh(instance: object, scope: StateScope, value: V | undefined): void {
    if (value !== undefined) this.#slot.add(instance, { scope, value });
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
