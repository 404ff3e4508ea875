/**
 * How the change feed turns a write into requests, in one place for the feeding store that sends them
 * and for explained plans that list them (so the two cannot drift): before a write that may record a
 * change, the partition's directory row (once per process) and the state queries; then one entity group
 * transaction laid out as `feedTransactionLayout` says.
 */

import type { FeedDirectory } from "./feed-directory.js";
import type { FeedTables } from "./feed-tables.js";

/** What an explained plan reads of a context's feed: its change-fed tables and the partitions it listed. */
export interface FeedExplainer {
  tables: FeedTables;
  directory: FeedDirectory;
}

/** One row of a change-fed transaction: the head, a caller's operation, or a change row of one. */
export type FeedSlot =
  | { row: "head" }
  | { row: "caller"; index: number }
  | { row: "journal"; of: number }
  | { row: "tombstone"; of: number };

/**
 * The rows of a change-fed transaction in the order they are sent: the head, the caller's operations
 * in their order, a journal row per change (the caller's order, consecutive sequence numbers), then a
 * tombstone per delete. No head when nothing is change-fed: the transaction is sent as it is.
 */
export function feedTransactionLayout(fed: readonly boolean[], deletes: readonly boolean[]): FeedSlot[] {
  if (!fed.includes(true)) return fed.map((_, index) => ({ row: "caller", index }));
  const slots: FeedSlot[] = [{ row: "head" }];
  for (let index = 0; index < fed.length; index++) slots.push({ row: "caller", index });
  for (let of = 0; of < fed.length; of++) if (fed[of]) slots.push({ row: "journal", of });
  for (let of = 0; of < fed.length; of++) if (fed[of] && deletes[of]) slots.push({ row: "tombstone", of });
  return slots;
}

/** The service allows 15 comparisons per filter: PartitionKey and the head take 2, each row 2 (itself, its tombstone). */
const ROWS_PER_QUERY = 6;

/** The RowKeys each state query reads (sent in parallel): six per query, one query for none. */
export function feedStateGroups(rowKeys: readonly string[]): string[][] {
  const groups: string[][] = [];
  for (let i = 0; i < rowKeys.length; i += ROWS_PER_QUERY) groups.push(rowKeys.slice(i, i + ROWS_PER_QUERY));
  if (groups.length === 0) groups.push([]);
  return groups;
}
