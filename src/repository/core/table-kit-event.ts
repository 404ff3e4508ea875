import type { QueryPageStats } from "../../query/query-budget.js";
import type { PaceReport } from "../pipeline/pacing/pacer.js";
import type { RepairReport } from "./repair-kind.js";

/** What a `TableContext` reports to its `onEvent` hook (default: nothing is reported anywhere). */
export type TableKitEvent =
  | { type: "request"; operation: string; table: string; attempt: number }
  | { type: "retry"; operation: string; table: string; attempt: number; delayMs: number; cause: unknown }
  | { type: "batch-committed"; table: string; partitionKey: string; operations: number }
  | { type: "batch-failed"; table: string; partitionKey: string; operations: number; error: unknown }
  /** One per `page()`, `toArray()` or iteration: its rows, its store requests and how many came back empty. */
  | ({ type: "query-page" } & QueryPageStats)
  /**
   * The pace of a partition or of the whole context changed (`throughput` option): `ramp-up` (slow
   * start), `throttled` (a 503/429 answer lowered it) or `recovered` (a quiet second raised it).
   */
  | ({ type: "throughput" } & PaceReport)
  /** A legal but risky design (e.g. `append-only-partition`), once per context per entity class. */
  | { type: "schema-warning"; entity: string; rule: string; message: string }
  /**
   * Something the context was set up to do does not work, e.g. `opentelemetry-unloadable`:
   * `@opentelemetry/api` is installed but cannot be loaded, so there are no spans. Once per context.
   */
  | { type: "warning"; code: string; message: string }
  /** One per repair worker pass: the counts of each kind, and the errors it met (the worker goes on). */
  | { type: "repair-pass"; counts: RepairReport; errors: unknown[] };

/** Receives events; must not throw (a throwing listener is ignored). */
export type TableKitEventListener = (event: TableKitEvent) => void;
