import type { TableTemplate } from "../../keys/table-template.js";
import type { QueryExecutor } from "../../query/query.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { isTableNotFound, type PeriodTableNames } from "../pipeline/period-table-store.js";
import { renumbered, unitOfItem } from "./bulk/bulk-item-error.js";
import type { BulkResult } from "./bulk/bulk-types.js";
import type { Requests, TableNaming } from "./requests.js";

export { isTableNotFound } from "../pipeline/period-table-store.js";

/** The executor of one period's table: a table that does not exist yet reads as empty. */
export function tolerateMissingTable<T>(executor: QueryExecutor<T>): QueryExecutor<T> {
  const tolerant: QueryExecutor<T> = {
    async fetchPage(table, filter, select, top, continuation) {
      try {
        return await executor.fetchPage(table, filter, select, top, continuation);
      } catch (error) {
        if (isTableNotFound(error)) return { items: [] };
        throw error;
      }
    },
    async fetchPoint(table, partitionKey, rowKey, select) {
      try {
        return await executor.fetchPoint(table, partitionKey, rowKey, select);
      } catch (error) {
        if (isTableNotFound(error)) return undefined;
        throw error;
      }
    },
    blindValues: executor.blindValues,
  };
  const fetchFirst = executor.fetchFirst;
  if (fetchFirst !== undefined) {
    tolerant.fetchFirst = async (table, filter, select, top) => {
      try {
        return await fetchFirst(table, filter, select, top);
      } catch (error) {
        if (isTableNotFound(error)) return [];
        throw error;
      }
    };
  }
  return tolerant;
}

/**
 * A bulk write of a table-per-period entity: reads every item first (so an item without its period
 * field rejects the whole call before any request), groups them by period table, and runs one bulk
 * write per table, one table after another; the results add up. A bad item's `ValidationError` names
 * its position in `items`, not in its group.
 */
export async function periodBulk<I, R>(
  model: EntityModel<object>,
  items: Iterable<I> | AsyncIterable<I>,
  tableOf: (item: I) => R,
  write: (table: R, group: I[]) => Promise<BulkResult<I>>,
): Promise<BulkResult<I>> {
  const groups = new Map<R, { items: I[]; positions: number[] }>();
  let index = 0;
  for await (const item of items) {
    const table = unitOfItem(model, item, index, tableOf);
    const group = groups.get(table);
    if (group === undefined) groups.set(table, { items: [item], positions: [index] });
    else {
      group.items.push(item);
      group.positions.push(index);
    }
    index++;
  }
  const total: BulkResult<I> = { written: 0, batches: 0, retries: 0, failed: [] };
  for (const [table, group] of groups) {
    let result: BulkResult<I>;
    try {
      result = await write(table, group.items);
    } catch (error) {
      throw renumbered(error, group.positions);
    }
    total.written += result.written;
    total.batches += result.batches;
    total.retries += result.retries;
    total.failed.push(...result.failed);
  }
  return total;
}

/** Lets the context's store stack create the period tables of an entity (and of its indexes) on first write. */
export function registerPeriodTables(periodTables: PeriodTableNames, model: EntityModel): void {
  if (model.tableTemplate !== undefined) periodTables.add(model.tableTemplate);
  for (const index of model.indexes.values()) {
    if (index.tableTemplate !== undefined) periodTables.add(index.tableTemplate);
  }
}

/** The existing tables of a period template with the end of each period, ascending (one listing request). */
export async function listPeriodTables(
  runner: Requests & TableNaming,
  template: TableTemplate,
): Promise<{ name: string; end: Date }[]> {
  const contextPrefix = runner.tableName("");
  const prefix = runner.tableName(template.literalPrefix);
  const names = await runner.run("listTables", prefix, (s) => s.listTables(prefix));
  const tables: { name: string; end: Date }[] = [];
  for (const name of names.sort()) {
    // The listing matches by prefix; keep only names this template produces (not `Logs2026x`).
    const start = template.periodOf(name.slice(contextPrefix.length));
    if (start !== undefined) tables.push({ name, end: template.nextPeriod(start) });
  }
  return tables;
}
