import type { StoreContinuation, StorePage } from "../table-store.js";
import type { CompiledFilter } from "./filter-cache.js";
import { tighterLow } from "./key-range.js";
import { compositeKey, type MemoryTable } from "./memory-table.js";
import { recordToStored, type StoredRecord } from "./typed-entity.js";

/** Where a page may end besides `top`: at PartitionKey boundaries (real Azure) or only by size (Azurite). */
export type PageBreaks = "partition" | "size-only";

/** One page request against one table. */
export interface PageRequest {
  readonly filter: CompiledFilter;
  readonly top: number;
  readonly continuation?: StoreContinuation | undefined;
  readonly select?: ReadonlySet<string> | undefined;
  readonly pageBreaks: PageBreaks;
  /** Called once per entity read from the index (the cost the service bills a scan for). */
  readonly onScanned: () => void;
}

/**
 * Reads one page: scans the filter's key range from the continuation (the first key ≥ the token, so
 * tokens stay valid when entities come and go between pages), keeps matches, and stops
 * - after `top` matches, with a continuation at the next entity of the range if there is one;
 * - with `pageBreaks: "partition"`, at the first entity of another partition, like the service when a
 *   query spans partitions. Such a page may be empty and still carry a continuation; since the
 *   continuation always points past the entities scanned, iteration makes progress and terminates.
 */
export function readPage(table: MemoryTable, request: PageRequest): StorePage {
  const { select } = request;
  return readRecordPage(table, request, (record) => recordToStored(record, select));
}

/** One page of records in any rendering (the server renders records itself, with their EDM types). */
export interface RenderedPage<T> {
  items: T[];
  continuation?: StoreContinuation;
}

/** `readPage` with the rendering of each matching record chosen by the caller. */
export function readRecordPage<T>(
  table: MemoryTable,
  request: PageRequest,
  render: (record: StoredRecord) => T,
): RenderedPage<T> {
  const { filter, top, continuation, onScanned } = request;
  let low = filter.range.low;
  if (continuation !== undefined) {
    low = tighterLow(low, {
      key: compositeKey(continuation.nextPartitionKey, continuation.nextRowKey ?? ""),
      inclusive: true,
    });
  }
  const items: T[] = [];
  let partition: string | undefined;
  for (const record of table.scan(low, filter.range.high)) {
    if (items.length >= top) return { items, continuation: continueAt(record.partitionKey, record.rowKey) };
    if (request.pageBreaks === "partition") {
      if (partition === undefined) partition = record.partitionKey;
      else if (record.partitionKey !== partition) {
        return { items, continuation: continueAt(record.partitionKey, record.rowKey) };
      }
    }
    onScanned();
    if (filter.predicate(record)) items.push(render(record));
  }
  return { items };
}

function continueAt(nextPartitionKey: string, nextRowKey: string): StoreContinuation {
  return { nextPartitionKey, nextRowKey };
}
