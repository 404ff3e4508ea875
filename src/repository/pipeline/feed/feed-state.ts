import { quoteString } from "../../../query/odata.js";
import { FEED_VERSION_PROPERTY } from "../../../schema/resolve-change-feed.js";
import type { StoredEntity, TableStore } from "../../../store/table-store.js";
import {
  COPY_INDEX_PROPERTY,
  ENTITY_TYPE_PROPERTY,
  SUMMARY_PROPERTY,
} from "../../../wire/system-properties.js";
import { feedStateGroups } from "./feed-requests.js";
import { FeedProperties, HEAD_ROW_KEY, tombstoneRowKey } from "./feed-rows.js";

/** What a change-fed write of a partition reads first: its head and the written rows with their versions. */
export interface FeedState {
  /** The head row (absent before the partition's first change). */
  head: StoredEntity | undefined;
  /** The stored rows by RowKey (only the properties the feed needs). */
  rows: Map<string, StoredEntity>;
  /** The tombstones of the written RowKeys, by RowKey of the entity. */
  tombstones: Map<string, StoredEntity>;
}

const SELECT = [
  "RowKey",
  FEED_VERSION_PROPERTY,
  FeedProperties.seq,
  FeedProperties.trimmed,
  FeedProperties.version,
  ENTITY_TYPE_PROPERTY,
  COPY_INDEX_PROPERTY,
  SUMMARY_PROPERTY,
];

/**
 * Reads the head and the rows (and tombstones) of `rowKeys` in one query per six RowKeys (one for a
 * single write), in parallel. Whatever was read stays true until the head's ETag changes: every
 * change-fed write of the partition updates the head in its transaction, conditional on that ETag.
 */
export async function readFeedState(
  store: TableStore,
  table: string,
  partitionKey: string,
  rowKeys: readonly string[],
): Promise<FeedState> {
  const groups = feedStateGroups(rowKeys);
  const pages = await Promise.all(
    groups.map((group, i) => {
      const keys = group.flatMap((rowKey) => [rowKey, tombstoneRowKey(rowKey)]);
      if (i === 0) keys.unshift(HEAD_ROW_KEY);
      const filter = `PartitionKey eq ${quoteString(partitionKey)} and (${keys.map((k) => `RowKey eq ${quoteString(k)}`).join(" or ")})`;
      return readAll(store, table, filter);
    }),
  );
  const state: FeedState = { head: undefined, rows: new Map(), tombstones: new Map() };
  const wanted = new Set(rowKeys);
  for (const page of pages) {
    for (const row of page) {
      if (row.rowKey === HEAD_ROW_KEY) state.head = row;
      else if (wanted.has(row.rowKey)) state.rows.set(row.rowKey, row);
      else state.tombstones.set(row.rowKey.slice(tombstoneRowKey("").length), row);
    }
  }
  return state;
}

async function readAll(store: TableStore, table: string, filter: string): Promise<StoredEntity[]> {
  const rows: StoredEntity[] = [];
  let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
  do {
    const page = await store.queryPage(table, { filter, select: SELECT, continuation });
    rows.push(...page.items);
    continuation = page.continuation;
  } while (continuation !== undefined);
  return rows;
}

/** The version an entity's next write gets: one past its row's, or past its tombstone's while retained. */
export function nextVersion(state: FeedState, rowKey: string): number {
  const row = state.rows.get(rowKey);
  const last =
    row === undefined ? state.tombstones.get(rowKey)?.[FeedProperties.version] : row[FEED_VERSION_PROPERTY];
  return (typeof last === "number" ? last : 0) + 1;
}

/** The head's sequence number (0 before the first change). */
export function headSeq(state: FeedState): number {
  const seq = state.head?.[FeedProperties.seq];
  return typeof seq === "number" ? seq : 0;
}
