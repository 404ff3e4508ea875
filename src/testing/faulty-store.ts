import { StoreError, type TableStore, ValidationError } from "../index.js";
import { type StoreMethod, type StoreRequest, StoreWrapper } from "./store-wrapper.js";

/**
 * A transient fault: `503` (ServerBusy), `500` (InternalError), `reset` (the connection drops before
 * the request reaches the service: nothing applied) or `lost` (the service applies the request, then
 * the answer is lost: the caller sees a reset and cannot know the write happened).
 */
export type StoreFaultKind = "503" | "500" | "reset" | "lost";

/** Every transient fault kind, the default mix of `faultyStore`. */
export const STORE_FAULT_KINDS: readonly StoreFaultKind[] = ["503", "500", "reset", "lost"];

/** Options of `faultyStore`. */
export interface FaultyStoreOptions {
  /** Seed of the decisions: the same seed faults the same requests. */
  seed: number;
  /** Probability that an attempt of a request fails, in [0, 1]. */
  rate: number;
  /** The kinds to pick from, uniformly (default all four). */
  kinds?: readonly StoreFaultKind[] | undefined;
  /**
   * Faults one request meets at most (default 3): its later attempts pass, so a context with at least
   * this many retries (the default has more) always succeeds in the end.
   */
  maxFaultsPerRequest?: number | undefined;
}

/** The counts a `faultyStore` keeps. */
export interface FaultCounts {
  /** Requests seen, faulted or not. */
  requests: number;
  /** Faults injected, by kind. */
  faults: Record<StoreFaultKind, number>;
}

/** A `TableStore` that injects seeded faults; `faultCounts` says how many it injected. */
export interface FaultyTableStore extends TableStore {
  /** The requests seen and the faults injected so far. */
  readonly faultCounts: FaultCounts;
}

/**
 * Wraps a store so that requests fail with seeded transient faults, for resilience tests of your own
 * code. Each attempt is decided from a hash of the seed, the operation, the request's keys (or query;
 * not its table name, which a test context prefixes at random) and its attempt number, never from
 * arrival order or the clock: the same requests meet the same faults in every run, whatever the
 * concurrency. Blob requests (large values) pass through unfaulted.
 *
 * @example
 * ```ts
 * const { db } = await createTestContext({
 *   wrapStore: (store) => faultyStore(store, { seed: 7, rate: 0.2 }),
 * });
 * ```
 */
export function faultyStore(store: TableStore, options: FaultyStoreOptions): FaultyTableStore {
  return new FaultyStore(store, options);
}

class FaultyStore extends StoreWrapper implements FaultyTableStore {
  readonly #seed: number;
  readonly #rate: number;
  readonly #kinds: readonly StoreFaultKind[];
  readonly #maxFaults: number;
  readonly #attempts = new Map<string, number>();
  readonly faultCounts: FaultCounts = { requests: 0, faults: { "503": 0, "500": 0, reset: 0, lost: 0 } };

  constructor(inner: TableStore, options: FaultyStoreOptions) {
    super(inner);
    const { seed, rate, kinds = STORE_FAULT_KINDS, maxFaultsPerRequest = 3 } = options;
    if (!Number.isInteger(seed)) {
      throw new ValidationError("seed", `faultyStore: seed must be an integer, got ${String(seed)}`);
    }
    if (!(typeof rate === "number" && rate >= 0 && rate <= 1)) {
      throw new ValidationError("rate", `faultyStore: rate must be within [0, 1], got ${String(rate)}`);
    }
    const unknown = kinds.filter((kind) => !STORE_FAULT_KINDS.includes(kind));
    if (kinds.length === 0 || unknown.length > 0) {
      throw new ValidationError(
        "kinds",
        `faultyStore: kinds must be some of ${STORE_FAULT_KINDS.join(", ")}, got ${JSON.stringify(kinds)}`,
      );
    }
    if (!(Number.isInteger(maxFaultsPerRequest) && maxFaultsPerRequest >= 0)) {
      throw new ValidationError(
        "maxFaultsPerRequest",
        `faultyStore: maxFaultsPerRequest must be a whole number ≥ 0, got ${String(maxFaultsPerRequest)}`,
      );
    }
    this.#seed = seed;
    this.#rate = rate;
    this.#kinds = [...kinds];
    this.#maxFaults = maxFaultsPerRequest;
  }

  /**
   * Decides one attempt of the request (its method and keys or query; a table request by its method
   * alone) and runs it (or not) accordingly.
   */
  protected override async around<T>({ method, identity }: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.faultCounts.requests += 1;
    const request =
      method === "createTable" || method === "deleteTable" ? method : `${method}\u0001${identity}`;
    const attempt = (this.#attempts.get(request) ?? 0) + 1;
    this.#attempts.set(request, attempt);
    if (attempt > this.#maxFaults || unitHash(this.#seed, request, attempt, 0) >= this.#rate) return send();
    const kind = this.#kinds[Math.floor(unitHash(this.#seed, request, attempt, 1) * this.#kinds.length)]!;
    this.faultCounts.faults[kind] += 1;
    switch (kind) {
      case "503":
        throw new StoreError(`injected fault: ${method}: 503 ServerBusy`, {
          statusCode: 503,
          serviceCode: "ServerBusy",
        });
      case "500":
        throw new StoreError(`injected fault: ${method}: 500 InternalError`, {
          statusCode: 500,
          serviceCode: "InternalError",
        });
      case "lost":
        // Applied, whatever its outcome; only the answer is lost.
        await send().catch(() => undefined);
        throw connectionReset(method);
      case "reset":
        throw connectionReset(method);
    }
  }
}

/** What a dropped connection looks like at the store port: a `StoreError` with code ECONNRESET and no status. */
function connectionReset(method: StoreMethod): StoreError {
  return new StoreError(`injected fault: ${method}: socket hang up`, { serviceCode: "ECONNRESET" });
}

/** A number in [0, 1) fixed by its inputs alone: FNV-1a over them, then one mulberry32 step to spread the bits. */
function unitHash(seed: number, request: string, attempt: number, salt: number): number {
  let hash = 0x811c9dc5;
  for (const part of [String(seed >>> 0), request, String(attempt), String(salt)]) {
    const text = `${part}\u0000`;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
  }
  let t = (hash + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
