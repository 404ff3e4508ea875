import type { TableStore } from "../../store/table-store.js";
import type { StateScope } from "../../util/scoped-state.js";
import type { StoreLimits } from "../../util/store-limits.js";
import type { BlindIndex } from "../pipeline/encryption/blind-index.js";
import type { BlobSealer } from "../pipeline/encryption/blob-sealing.js";
import type { FeedExplainer } from "../pipeline/feed/feed-requests.js";
import type { AttemptContext, RetryPolicy } from "../pipeline/retry-policy.js";
import type { TableKitEvent } from "./table-kit-event.js";

/**
 * The small roles a stage is given instead of the whole runner (store-runner.ts): each function or
 * class names the roles it uses, e.g. `Requests & TableNaming`. The context composes one object that
 * plays them all (table-context.ts); the store stack, encryption and period-table registration are
 * handed out there, to the few places that use them.
 */

/** Sends store requests through the retry policy and reports them (and other events) to the listener. */
export interface Requests {
  /** Runs one store request, retrying transient faults. */
  run<T>(
    operation: string,
    table: string,
    request: (store: TableStore, attempt: AttemptContext) => Promise<T>,
  ): Promise<T>;
  /** Reports an event; a failing listener never breaks the operation. */
  emit(event: TableKitEvent): void;
}

/** The physical name of an entity's table: the context's prefix + the table, at most 63 characters. */
export interface TableNaming {
  tableName(table: string): string;
}

/** Where tracked ETags and copies of instances read or written through these requests are valid. */
export interface Scoped {
  readonly scope: StateScope;
}

/** The backend's limits (Azure Table storage's unless the store declares its own). */
export interface Limited {
  readonly limits: StoreLimits;
}

/** The clock intents are dated and aged by, in milliseconds (the context's, when it was given one). */
export interface Clock {
  now(): number;
}

/** The retry policy's waits outside a request: between contended rounds, and a lost answer's read-back. */
export interface Backoff {
  readonly retry: Pick<RetryPolicy, "contend" | "run">;
}

/** Whether a table is a period's table (`Logs{at:month}`), created by its first write: missing, it holds nothing. */
export interface PeriodTableLookup {
  readonly periodTables: { has(table: string): boolean };
}

/** What the backend is and can do: its name, capabilities (sorted results, limits) and blob endpoint. */
export interface Backend {
  readonly backend: Pick<TableStore, "name" | "capabilities" | "blobs">;
}

/** Seals and opens the blobs of encrypted large columns: `undefined` when the context has no keys. */
export interface BlobSealing {
  readonly blobSealer: BlobSealer | undefined;
}

/**
 * The blind values of blind-indexed columns, for index keys and lookups: `undefined` when the context
 * has no `encryption.blindIndexKey` (then an index key naming such a column is refused).
 */
export interface BlindIndexing {
  readonly blindIndex: BlindIndex | undefined;
}

/**
 * What large values can count on here, as data for planners: the store's name, whether it has a blob
 * endpoint, whether the context has keys to seal the blobs of encrypted columns.
 */
export interface LargeValueSupport {
  readonly largeValues: { readonly store: string; readonly blobs: boolean; readonly canSeal: boolean };
}

/** The context's change feed, for explained plans: which tables are change-fed and which partitions are listed. */
export interface FeedExplaining {
  readonly feed: FeedExplainer | undefined;
}

/**
 * What a pure planner is given (issue 30: no planner holds a store): physical table names, where tracked
 * state is valid, the backend's limits, the clock, the blind values of blind-indexed columns and what large
 * values can count on (blobs, keys). Nothing
 * in it sends a request; the executor that runs the plan holds the `Requests`. The context's one object
 * may play both roles, but it is passed as two parameters of two types.
 */
export type Planning = TableNaming & Scoped & Limited & Clock & BlindIndexing & LargeValueSupport;

/** Every role at once: for the façade code that composes an entity's or a transaction's stages. */
export type RequestContext = Requests &
  TableNaming &
  Scoped &
  Limited &
  Clock &
  Backoff &
  PeriodTableLookup &
  Backend &
  BlobSealing &
  BlindIndexing &
  LargeValueSupport &
  FeedExplaining;
