import type { BlobStore } from "../blob-store.js";
import type {
  StoreContinuation,
  StoredEntity,
  TableStore,
  TransactionAction,
  WireEntity,
} from "../table-store.js";
import { escapeODataString } from "./filter-partition.js";
import { isMarkerRow } from "./partition-markers.js";

/** Operations per transaction the mover sends (below every backend's limit). */
const BATCH = 100;
/** The container prefix of tablekit's large values (src/repository/large/large-reference.ts). */
const LARGE_CONTAINER_PREFIX = "tablekit-";

/**
 * Every user row of one partition on one shard (marker rows left out), in RowKey order. `filter` (one
 * that names the partition itself) and `select` narrow it; `typed` reads with the store's typed read
 * when it has one (`TableStore.queryTypedPage`), so a copy keeps every value's EDM type.
 */
export async function readPartitionRows(
  store: TableStore,
  table: string,
  partitionKey: string,
  options: { filter?: string; select?: readonly string[] | undefined; typed?: boolean } = {},
): Promise<StoredEntity[]> {
  const { typed, ...narrowed } = options;
  const query = { filter: `PartitionKey eq '${escapeODataString(partitionKey)}'`, ...narrowed };
  const read =
    typed === true && store.queryTypedPage !== undefined
      ? store.queryTypedPage.bind(store)
      : store.queryPage.bind(store);
  const rows: StoredEntity[] = [];
  let continuation: StoreContinuation | undefined;
  do {
    const page = await read(table, { ...query, continuation });
    rows.push(...page.items.filter((row) => !isMarkerRow(row.rowKey)));
    continuation = page.continuation;
  } while (continuation !== undefined);
  // Unsorted backends (Cosmos DB) answer in any order; compare and copy in RowKey order.
  return rows.sort((a, b) => (a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0));
}

/** The row as written: keys and properties, without the server's ETag and Timestamp. */
export function wireOf(row: StoredEntity): WireEntity {
  const { etag: _etag, timestamp: _timestamp, ...entity } = row;
  return entity as WireEntity;
}

/** Sends `actions` of one partition in transactions of at most 100 operations. */
export async function submitInBatches(
  store: TableStore,
  table: string,
  partitionKey: string,
  actions: readonly TransactionAction[],
): Promise<void> {
  for (let i = 0; i < actions.length; i += BATCH) {
    await store.submitTransaction(table, partitionKey, actions.slice(i, i + BATCH));
  }
}

/** True when two rows hold the same properties (keys included; ETag and Timestamp aside). */
export function sameRow(a: StoredEntity, b: StoredEntity): boolean {
  const x = wireOf(a);
  const y = wireOf(b);
  const names = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const name of names) if (!sameValue(x[name], y[name])) return false;
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    return JSON.stringify(a) === JSON.stringify(b);
  }
  return a === b;
}

/** The large-value container of a table and the blob-name prefix of one partition in it. */
export function partitionBlobs(table: string, partitionKey: string): { container: string; prefix: string } {
  return {
    container: LARGE_CONTAINER_PREFIX + table.toLowerCase(),
    prefix: `k${Buffer.from(partitionKey, "utf8").toString("base64url")}/`,
  };
}

/** The names of the partition's large-value blobs on one shard. */
export async function listPartitionBlobs(
  blobs: BlobStore,
  table: string,
  partitionKey: string,
): Promise<string[]> {
  const { container, prefix } = partitionBlobs(table, partitionKey);
  const names: string[] = [];
  let continuation: string | undefined;
  do {
    const page = await blobs.list(container, { prefix, continuation });
    names.push(...page.items.map((blob) => blob.name));
    continuation = page.continuation;
  } while (continuation !== undefined);
  return names;
}
