import { ValidationError } from "../../errors.js";
import type { PageBreaks } from "./query-pager.js";

/** Options of `MemoryStore`. */
export interface MemoryStoreOptions {
  /**
   * Persist to this file: loaded (and compacted) synchronously by the constructor when it exists;
   * every committed request is then appended to it as one JSON line. Blobs (large entity values)
   * are kept the same way beside it, in `<file>.blobs`.
   */
  file?: string | undefined;
  /**
   * `"partition"` (default): like Azure, a page also ends where a query crosses into another
   * PartitionKey, so pages can be short or even empty yet carry a continuation.
   * `"size-only"`: like Azurite, pages end only after `top` entities.
   */
  pageBreaks?: PageBreaks | undefined;
  /**
   * `"azure"` (default): Azure Table storage's semantics. `"cosmos"`: the Cosmos DB Table API's, to
   * test code against them offline: results in an unspecified (seeded, shuffled) order with
   * `capabilities.sortedResults === false`, and Cosmos limits (255-byte RowKey, 2 MB batches,
   * reserved property names, case-sensitive table names; see util/store-limits.ts).
   */
  flavor?: MemoryStoreFlavor | undefined;
  /** Seed of the `"cosmos"` flavour's result order (default 1; read it back as `store.seed`). */
  seed?: number | undefined;
  /**
   * For this many milliseconds after a table is deleted, creating a table of the same name fails with
   * 409 `TableBeingDeleted`, as on Azure ("Delete Table": deleting a table "is likely to take at least
   * 40 seconds to complete"; meanwhile operations on it get 409 Conflict). Default 0 (no delay).
   */
  tableDeleteDelayMs?: number | undefined;
  /**
   * The clock the store reads, in milliseconds since the epoch (default `Date.now`): entity Timestamps
   * and the `tableDeleteDelayMs` window follow it, so tests can move time without sleeping.
   */
  now?: (() => number) | undefined;
}

/** Which backend a `MemoryStore` behaves like. */
export type MemoryStoreFlavor = "azure" | "cosmos";

/** `MemoryStoreOptions` checked (`ValidationError` for a bad one) and with their defaults filled in. */
export interface ResolvedMemoryStoreOptions {
  readonly flavor: MemoryStoreFlavor;
  readonly seed: number;
  readonly pageBreaks: PageBreaks;
  readonly tableDeleteDelayMs: number;
  readonly now: () => number;
}

/** Checks `MemoryStore`'s options and fills in their defaults. */
export function resolveMemoryStoreOptions(options: MemoryStoreOptions): ResolvedMemoryStoreOptions {
  const flavor = options.flavor ?? "azure";
  if (flavor !== "azure" && flavor !== "cosmos") {
    throw new ValidationError(
      "memory-flavor",
      `MemoryStore: flavor must be "azure" or "cosmos", got ${String(flavor)}`,
      {
        field: "flavor",
      },
    );
  }
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) {
    throw new ValidationError("memory-seed", `MemoryStore: seed must be an integer, got ${String(seed)}`, {
      field: "seed",
    });
  }
  const pageBreaks = options.pageBreaks ?? "partition";
  if (pageBreaks !== "partition" && pageBreaks !== "size-only") {
    throw new ValidationError(
      "memory-page-breaks",
      `MemoryStore: pageBreaks must be "partition" or "size-only", got ${String(pageBreaks)}`,
      { field: "pageBreaks" },
    );
  }
  const delay = options.tableDeleteDelayMs ?? 0;
  if (typeof delay !== "number" || !Number.isFinite(delay) || delay < 0) {
    throw new ValidationError(
      "memory-table-delete-delay",
      `MemoryStore: tableDeleteDelayMs must be a number of milliseconds >= 0, got ${String(delay)}`,
      { field: "tableDeleteDelayMs" },
    );
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new ValidationError("memory-now", "MemoryStore: now must be a function returning milliseconds", {
      field: "now",
    });
  }
  return { flavor, seed, pageBreaks, tableDeleteDelayMs: delay, now: options.now ?? Date.now };
}
