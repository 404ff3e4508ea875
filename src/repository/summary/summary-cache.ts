import type { StateScope } from "../../util/scoped-state.js";
import type { SummaryState } from "./summary-row.js";

/** Summary rows remembered per scope; the oldest are dropped beyond this many. */
const MAX_ENTRIES = 10_000;

const caches = new WeakMap<StateScope, SummaryCache>();

/** The cache key of one summary row: its place and its marker (two types' summaries may claim one place). */
export function summaryCacheKey(table: string, partitionKey: string, rowKey: string, marker: string): string {
  return `${table}\n${partitionKey}\n${rowKey}\n${marker}`;
}

/**
 * The last known state (ETag and values) of summary rows, per context scope, so a write whose summary
 * row is known needs no read first. A stale entry costs nothing but a round: the write is conditional
 * on the ETag, fails with 412, and the row is read again.
 */
export class SummaryCache {
  readonly #entries = new Map<string, SummaryState & { etag: string }>();

  /** The cache of one scope (contexts on the same store and prefix share it). */
  static of(scope: StateScope): SummaryCache {
    let cache = caches.get(scope);
    if (cache === undefined) {
      cache = new SummaryCache();
      caches.set(scope, cache);
    }
    return cache;
  }

  get(key: string): SummaryState | undefined {
    return this.#entries.get(key);
  }

  remember(key: string, state: SummaryState & { etag: string }): void {
    this.#entries.delete(key);
    this.#entries.set(key, state);
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
