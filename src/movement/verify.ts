import type { ReadOptions, TableEndpoint } from "./endpoint.js";
import { type Row, rowDifference } from "./typed-row.js";

/** One difference between two tables. */
export interface RowMismatch {
  partitionKey: string;
  rowKey: string;
  /** "only-first", "only-second", or "different" (with what differs). */
  kind: "only-first" | "only-second" | "different";
  detail?: string | undefined;
}

export interface VerifyResult {
  compared: number;
  equal: number;
  onlyFirst: number;
  onlySecond: number;
  different: number;
}

/**
 * Compares two tables entity by entity (keys, property names, Edm types and values; Timestamp aside),
 * reading both in key order side by side: memory holds one page of each. Each difference goes to
 * `onMismatch`. Both sides must return rows sorted by PartitionKey, RowKey (Azure Table storage,
 * Azurite and `tablekit serve` do; the Cosmos DB Table API does not).
 */
export async function verifyTables(
  first: { endpoint: TableEndpoint; table: string },
  second: { endpoint: TableEndpoint; table: string },
  options: ReadOptions,
  onMismatch: (mismatch: RowMismatch) => void,
  onRows?: (rows: number) => void,
): Promise<VerifyResult> {
  const result: VerifyResult = { compared: 0, equal: 0, onlyFirst: 0, onlySecond: 0, different: 0 };
  const a = rowsOf(first.endpoint.pages(first.table, options));
  const b = rowsOf(second.endpoint.pages(second.table, options));
  let x = await a.next();
  let y = await b.next();
  while (!x.done || !y.done) {
    const order = x.done ? 1 : y.done ? -1 : compareKeys(x.value, y.value);
    result.compared++;
    if (order < 0) {
      const row = x.value as Row;
      result.onlyFirst++;
      onMismatch({ partitionKey: row.partitionKey, rowKey: row.rowKey, kind: "only-first" });
      x = await a.next();
    } else if (order > 0) {
      const row = y.value as Row;
      result.onlySecond++;
      onMismatch({ partitionKey: row.partitionKey, rowKey: row.rowKey, kind: "only-second" });
      y = await b.next();
    } else {
      const left = x.value as Row;
      const detail = rowDifference(left, y.value as Row);
      if (detail === undefined) result.equal++;
      else {
        result.different++;
        onMismatch({ partitionKey: left.partitionKey, rowKey: left.rowKey, kind: "different", detail });
      }
      onRows?.(1);
      x = await a.next();
      y = await b.next();
    }
  }
  return result;
}

async function* rowsOf(pages: AsyncIterable<Row[]>): AsyncGenerator<Row> {
  for await (const page of pages) yield* page;
}

function compareKeys(a: Row, b: Row): number {
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  if (a.rowKey !== b.rowKey) return a.rowKey < b.rowKey ? -1 : 1;
  return 0;
}
