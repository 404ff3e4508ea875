import { quoteString } from "../../../query/odata.js";
import type { TableStore } from "../../../store/table-store.js";
import { isTableNotFound } from "../period-table-store.js";

/** tablekit's table listing the partitions that have changes, so a reader finds them without a table scan. */
export const FEEDS_TABLE = "TablekitFeeds";

/** A partition with changes: its physical table and PartitionKey. */
export interface FeedPartition {
  table: string;
  partitionKey: string;
}

/**
 * The directory of change-fed partitions: one row per partition (PartitionKey: the entity's table or
 * period template, RowKey: `<physical table>:<PartitionKey>`), upserted before the partition's first
 * change-fed write from this process (cached afterwards), so every partition with a change is listed.
 */
export class FeedDirectory {
  readonly table: string;
  readonly #registered = new Set<string>();

  constructor(prefix: string) {
    this.table = prefix + FEEDS_TABLE;
  }

  /** Whether this process listed the partition already (then its writes send no directory upsert). */
  has(logical: string, partition: FeedPartition): boolean {
    return this.#registered.has(`${logical}\u0000${partition.table}:${partition.partitionKey}`);
  }

  /** Lists the partition before its first change-fed write (an idempotent upsert; none when already done). */
  async register(store: TableStore, logical: string, partition: FeedPartition): Promise<void> {
    const rowKey = `${partition.table}:${partition.partitionKey}`;
    const key = `${logical}\u0000${rowKey}`;
    if (this.#registered.has(key)) return;
    const row = { partitionKey: logical, rowKey };
    try {
      await store.upsert(this.table, row, "replace");
    } catch (error) {
      if (!isTableNotFound(error)) throw error;
      await store.createTable(this.table);
      await store.upsert(this.table, row, "replace");
    }
    this.#registered.add(key);
  }

  /** The partitions of one entity's table (or period template) with changes; none when nothing was written. */
  async list(store: TableStore, logical: string): Promise<FeedPartition[]> {
    const partitions: FeedPartition[] = [];
    let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
    do {
      let page: Awaited<ReturnType<TableStore["queryPage"]>>;
      try {
        page = await store.queryPage(this.table, {
          filter: `PartitionKey eq ${quoteString(logical)}`,
          select: ["RowKey"],
          continuation,
        });
      } catch (error) {
        if (isTableNotFound(error)) return [];
        throw error;
      }
      for (const row of page.items) {
        const at = row.rowKey.indexOf(":");
        partitions.push({ table: row.rowKey.slice(0, at), partitionKey: row.rowKey.slice(at + 1) });
      }
      continuation = page.continuation;
    } while (continuation !== undefined);
    return partitions.sort((a, b) =>
      a.table === b.table ? compare(a.partitionKey, b.partitionKey) : compare(a.table, b.table),
    );
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
