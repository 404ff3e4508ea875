import type { QueryExecutor } from "../../query/query.js";
import type { StoreContinuation, StoredEntity } from "../../store/table-store.js";
import { ServiceLimits } from "../../util/service-limits.js";
import type { Backend, Requests } from "./requests.js";

/** One kept result and the row keys it sorts by. */
interface Keyed<T> {
  partitionKey: string;
  rowKey: string;
  item: T;
}

/**
 * The `fetchFirst` of a query executor on a store that returns results unsorted (the Cosmos DB Table
 * API: https://learn.microsoft.com/en-us/azure/cosmos-db/table/faq), or nothing on a sorted store.
 * It reads every page of the filter, keeps the rows `toItem` maps (other types and index copies are
 * skipped as on any read), and resolves the first `top` in (PartitionKey, RowKey) order, holding at
 * most about `top` + one page of results in memory.
 */
export function keyOrderedRead<T>(
  runner: Requests & Backend,
  toItem: (stored: StoredEntity) => T | undefined,
): Pick<QueryExecutor<T>, "fetchFirst"> {
  if (runner.backend.capabilities.sortedResults) return {};
  return {
    fetchFirst: async (table, filter, select, top) => {
      let kept: Array<Keyed<T>> = [];
      let continuation: StoreContinuation | undefined;
      do {
        const page = await runner.run("query", table, (s) =>
          s.queryPage(table, {
            ...(filter ? { filter } : {}),
            ...(select ? { select } : {}),
            top: ServiceLimits.maxPageSize,
            ...(continuation ? { continuation } : {}),
          }),
        );
        for (const stored of page.items) {
          const item = toItem(stored);
          if (item !== undefined)
            kept.push({ partitionKey: stored.partitionKey, rowKey: stored.rowKey, item });
        }
        // Trimming to the best `top` now and then keeps memory bounded by `top`, not by the range.
        if (kept.length >= 2 * top + ServiceLimits.maxPageSize) kept = kept.sort(byKeys).slice(0, top);
        continuation = page.continuation;
      } while (continuation !== undefined);
      kept.sort(byKeys);
      return (Number.isFinite(top) ? kept.slice(0, top) : kept).map((k) => k.item);
    },
  };
}

/** The Table service's order: PartitionKey, then RowKey, by UTF-16 code units. */
function byKeys<T>(a: Keyed<T>, b: Keyed<T>): number {
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  return a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0;
}
