import { ValidationError } from "../../../errors.js";
import { DATA_KEY_BYTES } from "./envelope.js";
import type { KeyResolver } from "./key-resolver.js";

/**
 * Unwrapped data keys by (key id, wrapped key), least recently used first out. Every column of a row
 * shares one wrapped key, and a row read twice shares it again, so a scan unwraps once per row at most
 * (with a key service, one call instead of one per column). A key at hand is returned as it is (a
 * synchronous resolver's reads need no promise); pending unwraps are shared, and a failed one is
 * forgotten, so the next read asks again.
 */
export class DataKeyCache {
  readonly #capacity: number;
  readonly #entries = new Map<string, Uint8Array | Promise<Uint8Array>>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The data key for this wrapped key, unwrapping it (once) when it is not cached. */
  get(keyId: string, wrapped: Uint8Array, resolver: KeyResolver): Uint8Array | Promise<Uint8Array> {
    const key = cacheKey(keyId, wrapped);
    const cached = this.#entries.get(key);
    if (cached !== undefined) {
      // Map order is insertion order: re-inserting marks it most recently used.
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached;
    }
    const unwrapped = unwrap(resolver, keyId, wrapped);
    this.#remember(key, unwrapped);
    if (unwrapped instanceof Promise) {
      unwrapped.then(
        (dataKey) => {
          if (this.#entries.get(key) === unwrapped) this.#entries.set(key, dataKey);
        },
        () => {
          if (this.#entries.get(key) === unwrapped) this.#entries.delete(key);
        },
      );
    }
    return unwrapped;
  }

  /** Records a data key this process wrapped itself, so reading its own writes needs no unwrap. */
  put(keyId: string, wrapped: Uint8Array, dataKey: Uint8Array): void {
    this.#remember(cacheKey(keyId, wrapped), dataKey);
  }

  #remember(key: string, value: Uint8Array | Promise<Uint8Array>): void {
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}

/** The resolver's unwrap, checked; synchronous when the resolver is. */
function unwrap(resolver: KeyResolver, keyId: string, wrapped: Uint8Array): Uint8Array | Promise<Uint8Array> {
  const key = resolver.unwrapKey(keyId, wrapped);
  return typeof (key as { then?: unknown } | null)?.then === "function"
    ? Promise.resolve(key).then(checkDataKey)
    : checkDataKey(key as Uint8Array);
}

function checkDataKey(key: Uint8Array): Uint8Array {
  if (!(key instanceof Uint8Array) || key.byteLength !== DATA_KEY_BYTES)
    throw new ValidationError("data-key", `unwrapKey must return ${DATA_KEY_BYTES} bytes`);
  return key;
}

function cacheKey(keyId: string, wrapped: Uint8Array): string {
  // latin1: one character per byte, the cheapest exact text of the bytes.
  return `${keyId}\u0000${Buffer.from(wrapped.buffer, wrapped.byteOffset, wrapped.byteLength).toString("latin1")}`;
}
