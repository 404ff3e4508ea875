import type { QueryExecutor } from "../../query/query.js";
import type { PropertyTypes, StoredEntity } from "../../store/table-store.js";
import { keyOrderedRead } from "./key-ordered-read.js";
import type { Backend, BlindIndexing, Requests } from "./requests.js";

/**
 * The one way queries reach a table: pages and point reads through the runner (retries, events),
 * each stored row turned into a result by `toEntity` (`undefined` skips it: another type's row,
 * an index copy). Repositories, multi-type queries and index lookups differ only in `toEntity`.
 * On unsorted stores (Cosmos DB) it also answers order-dependent reads (see key-ordered-read.ts).
 * `types`: the model's property types, when every row `toEntity` keeps is of one model (read-types.ts).
 */
export function queryExecutor<T>(
  runner: Requests & Backend & Partial<BlindIndexing>,
  toEntity: (stored: StoredEntity) => T | undefined,
  types?: PropertyTypes,
): QueryExecutor<T> {
  return {
    async fetchPage(table, filter, select, top, continuation) {
      const page = await runner.run("query", table, (s) =>
        s.queryPage(table, {
          ...(filter ? { filter } : {}),
          ...(select ? { select } : {}),
          top,
          ...(continuation ? { continuation } : {}),
          ...(types ? { types } : {}),
        }),
      );
      const items: T[] = [];
      for (const stored of page.items) {
        const item = toEntity(stored);
        if (item !== undefined) items.push(item);
      }
      return page.continuation ? { items, continuation: page.continuation } : { items };
    },
    async fetchPoint(table, partitionKey, rowKey, select) {
      const stored = await runner.run("get", table, (s) =>
        s.getEntity(table, partitionKey, rowKey, select, types),
      );
      return stored ? toEntity(stored) : undefined;
    },
    reportPage(stats) {
      runner.emit({ type: "query-page", ...stats });
    },
    ...keyOrderedRead(runner, toEntity),
    blindValues: runner.blindIndex,
  };
}
