import type { TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "./store-wrapper.js";

/**
 * A store that holds every request at its door until the test releases it, recording the order
 * requests arrived in and the most that were ever in flight at once: concurrency tests step it
 * request by request instead of sleeping.
 */
export class GatedStore extends StoreWrapper {
  /** Requests in the order they reached this store (for a capped context: the order slots were granted). */
  readonly arrived: StoreRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** While true, requests wait for `releaseNext`/`openAll`; otherwise they pass straight through. */
  holding = true;
  /** Requests whose next attempt fails with this error instead of reaching the inner store. */
  readonly failOnce = new Map<string, Error>();
  readonly #held: Array<() => void> = [];
  readonly #watchers: Array<{ count: number; resolve: () => void }> = [];

  constructor(inner: TableStore) {
    super(inner);
  }

  /** Resolves once at least `count` requests have arrived. */
  arrivals(count: number): Promise<void> {
    if (this.arrived.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#watchers.push({ count, resolve }));
  }

  /** Lets the longest-held request go on. */
  releaseNext(): void {
    this.#held.shift()?.();
  }

  /** Lets every held request, and every later one, go on. */
  openAll(): void {
    this.holding = false;
    for (const release of this.#held.splice(0)) release();
  }

  protected override async around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.arrived.push(request);
    for (const watcher of this.#watchers.filter((w) => this.arrived.length >= w.count)) {
      this.#watchers.splice(this.#watchers.indexOf(watcher), 1);
      watcher.resolve();
    }
    try {
      if (this.holding) await new Promise<void>((resolve) => this.#held.push(resolve));
      const failure = this.failOnce.get(request.identity);
      if (failure) {
        this.failOnce.delete(request.identity);
        throw failure;
      }
      return await send();
    } finally {
      this.inFlight--;
    }
  }
}
