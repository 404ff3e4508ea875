import type { QueryExecutor } from "../../query/query.js";
import { LargeValueMissing, type LargeValues } from "./large-values.js";

/** Point reads of an entity whose blob vanished under the read (replaced meanwhile) before giving up. */
const POINT_ATTEMPTS = 3;

/**
 * A query executor whose results carry their large values: each page's entities (or the point
 * read's) are completed with their blobs before they are returned, downloads bounded over the page.
 * A blob that is gone means the row changed after it was read: a point read reads it again; an
 * entity of a page is read again by its keys (and left out if it has been deleted meanwhile).
 * A `select` without the large columns reads no reference, so downloads nothing.
 */
export function withLargeValues<T>(
  executor: QueryExecutor<T>,
  large: LargeValues,
  keysOf: (item: T) => { partitionKey: string; rowKey: string },
): QueryExecutor<T> {
  const point: QueryExecutor<T>["fetchPoint"] = async (table, partitionKey, rowKey, select) => {
    for (let attempt = 1; ; attempt++) {
      const item = await executor.fetchPoint(table, partitionKey, rowKey, select);
      if (item === undefined) return undefined;
      try {
        await large.complete([item as object]);
        return item;
      } catch (error) {
        if (!(error instanceof LargeValueMissing) || attempt >= POINT_ATTEMPTS) throw error;
      }
    }
  };
  const completeAll = async (
    table: string,
    select: readonly string[] | undefined,
    items: T[],
  ): Promise<T[]> => {
    try {
      await large.complete(items as object[]);
      return items;
    } catch (error) {
      if (!(error instanceof LargeValueMissing)) throw error;
    }
    // Rare (a write raced the read): read each entity again; `complete` skips those already done.
    const fresh: T[] = [];
    for (const item of items) {
      try {
        await large.complete([item as object]);
        fresh.push(item);
      } catch (error) {
        if (!(error instanceof LargeValueMissing)) throw error;
        const { partitionKey, rowKey } = keysOf(item);
        const again = await point(table, partitionKey, rowKey, select);
        if (again !== undefined) fresh.push(again);
      }
    }
    return fresh;
  };
  const wrapped: QueryExecutor<T> = {
    async fetchPage(table, filter, select, top, continuation) {
      const page = await executor.fetchPage(table, filter, select, top, continuation);
      const items = await completeAll(table, select, page.items);
      return page.continuation ? { items, continuation: page.continuation } : { items };
    },
    fetchPoint: point,
    blindValues: executor.blindValues,
  };
  const fetchFirst = executor.fetchFirst;
  if (fetchFirst !== undefined) {
    wrapped.fetchFirst = async (table, filter, select, top) =>
      completeAll(table, select, await fetchFirst(table, filter, select, top));
  }
  const reportPage = executor.reportPage;
  if (reportPage !== undefined) wrapped.reportPage = (stats) => reportPage(stats);
  return wrapped;
}
