/**
 * Unwrapped data keys by (key id, wrapped key), least recently used first out. Every column of a row
 * shares one wrapped key, and a row read twice shares it again, so a scan unwraps once per row at most
 * (with a key service, one call instead of one per column). Pending unwraps are shared too; a failed
 * one is forgotten, so the next read asks again.
 */
export class DataKeyCache {
  readonly #capacity: number;
  readonly #entries = new Map<string, Promise<Uint8Array>>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The data key for this wrapped key, unwrapping it (once) when it is not cached. */
  get(keyId: string, wrapped: Uint8Array, unwrap: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const key = cacheKey(keyId, wrapped);
    const cached = this.#entries.get(key);
    if (cached !== undefined) {
      // Map order is insertion order: re-inserting marks it most recently used.
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached;
    }
    const pending = unwrap();
    this.#remember(key, pending);
    pending.catch(() => {
      if (this.#entries.get(key) === pending) this.#entries.delete(key);
    });
    return pending;
  }

  /** Records a data key this process wrapped itself, so reading its own writes needs no unwrap. */
  put(keyId: string, wrapped: Uint8Array, dataKey: Uint8Array): void {
    this.#remember(cacheKey(keyId, wrapped), Promise.resolve(dataKey));
  }

  #remember(key: string, value: Promise<Uint8Array>): void {
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}

function cacheKey(keyId: string, wrapped: Uint8Array): string {
  // latin1: one character per byte, the cheapest exact text of the bytes.
  return `${keyId}\u0000${Buffer.from(wrapped.buffer, wrapped.byteOffset, wrapped.byteLength).toString("latin1")}`;
}
