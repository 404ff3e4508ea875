import { ValidationError } from "../errors.js";
import type { QueryExplanation } from "./query-plan.js";

/**
 * Refuses an order-dependent read (`first`, `take`, `latest`) that would have to read a whole table
 * on a store whose results are unsorted (the Cosmos DB Table API): within one partition tablekit
 * reads the range and sorts it, but a table scan has no bound, so the caller must choose.
 */
export function assertKeyOrderBounded(plan: QueryExplanation, call: string): void {
  if (plan.kind !== "table-scan") return;
  throw new ValidationError(
    "unsorted-order",
    `${call} on a table scan needs results in key order, but this store returns them unsorted ` +
      "(capabilities.sortedResults is false, e.g. the Cosmos DB Table API), so the first results of a scan " +
      "are arbitrary and finding the real ones means reading the whole table. Narrow it to a partition " +
      "with find(...) (tablekit then reads that range and sorts it), or read everything with toArray(), " +
      "which returns key order on every store",
  );
}

/** Refuses paging through `take(n)` on an unsorted store when the answer does not fit one page. */
export function assertTakeFitsPage(take: number, size: number, resumed: boolean): void {
  if (!resumed && take <= size) return;
  throw new ValidationError(
    "unsorted-order",
    `page() over take(${take}) on a store that returns results unsorted (capabilities.sortedResults is false) ` +
      `is answered in one page of the first ${take} in key order, read from the whole range; ` +
      `${resumed ? "it has no continuation to resume from" : `a page of ${size} cannot hold it`}. ` +
      "Use page({ size }) with size ≥ n, or toArray()",
  );
}

/**
 * On an unsorted store (Cosmos DB Table API) `take(n)` and `toArray()` read the whole key range to
 * sort it, so a request budget cannot be kept: refused up front rather than silently exceeded.
 */
export function assertNoBudget(bounded: boolean, what: string): void {
  if (!bounded) return;
  throw new ValidationError(
    "max-requests",
    `${what} on a store with unsorted results reads the whole key range; maxRequests cannot bound it`,
  );
}
