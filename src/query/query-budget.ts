import { ValidationError } from "../errors.js";
import type { QueryKind } from "./query-plan.js";

/** What one `page()`, `toArray()` or iteration of a query cost, as its `query-page` event reports it. */
export interface QueryPageStats {
  /** The physical table (after the context's table prefix). */
  table: string;
  kind: QueryKind;
  /** Results handed to the caller. */
  rows: number;
  /** Store requests sent (retries of one request not counted). */
  requests: number;
  /** Requests that brought back no result: a sparse scan shows up here. */
  emptyPages: number;
  /** Present when the read stopped at its `maxRequests` before the end. */
  budgetExhausted?: true;
}

/** Refuses a request budget that is not a positive integer (before any request is sent). */
export function checkedMaxRequests(maxRequests: unknown): number | undefined {
  if (maxRequests === undefined) return undefined;
  if (typeof maxRequests !== "number" || !Number.isSafeInteger(maxRequests) || maxRequests < 1) {
    throw new ValidationError(
      "max-requests",
      `maxRequests must be a positive integer, got ${String(maxRequests)}`,
    );
  }
  return maxRequests;
}

/** Counts one read's store requests against its optional budget. */
export class RequestBudget {
  readonly #max: number;
  requests = 0;
  emptyPages = 0;
  rows = 0;
  /** Set when the read stopped for want of requests with more to read. */
  exhausted = false;

  constructor(max: number | undefined) {
    this.#max = max ?? Number.POSITIVE_INFINITY;
  }

  /** Whether the read has a request budget at all. */
  get bounded(): boolean {
    return this.#max !== Number.POSITIVE_INFINITY;
  }

  /** Whether another request may be sent. */
  get allows(): boolean {
    return this.requests < this.#max;
  }

  /** Records one store request that brought back `results` results. */
  count(results: number): void {
    this.requests++;
    if (results === 0) this.emptyPages++;
  }

  /** The event's numbers for a read of `plan` that handed `rows` results to the caller. */
  stats(plan: { table: string; kind: QueryKind }, rows: number): QueryPageStats {
    const stats: QueryPageStats = {
      table: plan.table,
      kind: plan.kind,
      rows,
      requests: this.requests,
      emptyPages: this.emptyPages,
    };
    return this.exhausted ? { ...stats, budgetExhausted: true } : stats;
  }
}
