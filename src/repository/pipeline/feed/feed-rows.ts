import { quoteString } from "../../../query/odata.js";
import type { StoredEntity, WireEntity, WireValue } from "../../../store/table-store.js";
import { wireEntityBytes } from "../../../util/entity-size.js";
import type { StoreLimits } from "../../../util/store-limits.js";
import { ENTITY_TYPE_PROPERTY, LIBRARY_PROPERTY_PREFIX } from "../../../wire/system-properties.js";

/**
 * The rows the change feed keeps in each partition of a change-fed entity's table, after every
 * entity's RowKey (`~` sorts after letters and digits):
 * - the head `~tkfeed~head`: `Seq`, the partition's last sequence number, and `Trimmed`, the last one
 *   trimmed; every change-fed write updates it conditionally on its ETag, so writes of a partition
 *   get consecutive numbers, none lost, none twice;
 * - a journal row per change, `~tkfeed~j~<seq, 12 digits>`;
 * - a tombstone per deleted entity, `~tkfeed~t~<RowKey>`, holding its last version while retained.
 */
export const FEED_ROW_PREFIX = "~tkfeed~";
export const HEAD_ROW_KEY = `${FEED_ROW_PREFIX}head`;
const JOURNAL_PREFIX = `${FEED_ROW_PREFIX}j~`;
const TOMBSTONE_PREFIX = `${FEED_ROW_PREFIX}t~`;
const SEQ_DIGITS = 12;

/** Properties of feed rows (tablekit's `_tk` prefix: never a user column). */
export const FeedProperties = {
  seq: "Seq",
  trimmed: "Trimmed",
  kind: "_tkfKind",
  rowKey: "_tkfRowKey",
  version: "_tkfVer",
  at: "_tkfAt",
  reason: "_tkfReason",
  /** What rides in the journal row: `entity` (the whole row), `changes` (a merge's columns) or `key`. */
  carries: "_tkfCarries",
  type: "_tkfType",
  /** The id of the write that recorded the change: a resend after a lost answer finds it (feed-resend.ts). */
  write: "_tkfWrite",
} as const;

/**
 * A copied property's name in a journal row: the entity's own names would be opened by the
 * encrypting store with the journal row's keys, but a value's associated data binds its own row's
 * keys (envelope.ts); the reader opens the copy under the entity's keys instead.
 */
export const COPY_PREFIX = "_tk_";

export type JournalKind = "insert" | "replace" | "merge" | "delete";
export type JournalCarries = "entity" | "changes" | "key";

export function isFeedRowKey(rowKey: string): boolean {
  return rowKey.startsWith(FEED_ROW_PREFIX);
}

export function journalRowKey(seq: number): string {
  return `${JOURNAL_PREFIX}${String(seq).padStart(SEQ_DIGITS, "0")}`;
}

export function seqOfJournalRowKey(rowKey: string): number {
  return Number(rowKey.slice(JOURNAL_PREFIX.length));
}

export function tombstoneRowKey(rowKey: string): string {
  return `${TOMBSTONE_PREFIX}${rowKey}`;
}

/** The filter of a partition's journal rows after `seq`, with its head row (the head sorts first). */
export function journalAfterFilter(partitionKey: string, seq: number): string {
  return (
    `PartitionKey eq ${quoteString(partitionKey)} and (RowKey eq ${quoteString(HEAD_ROW_KEY)} or ` +
    `(RowKey gt ${quoteString(journalRowKey(seq))} and RowKey lt ${quoteString(`${JOURNAL_PREFIX}~`)}))`
  );
}

/** The filter of a partition's journal rows after `seq` alone: a key range the service reads without a scan. */
export function journalRangeFilter(partitionKey: string, seq: number): string {
  return `PartitionKey eq ${quoteString(partitionKey)} and RowKey gt ${quoteString(journalRowKey(seq))} and RowKey lt ${quoteString(`${JOURNAL_PREFIX}~`)}`;
}

/** The filter of a partition's tombstones. */
export function tombstonesFilter(partitionKey: string): string {
  return `PartitionKey eq ${quoteString(partitionKey)} and RowKey ge ${quoteString(TOMBSTONE_PREFIX)} and RowKey lt ${quoteString(`${TOMBSTONE_PREFIX.slice(0, -1)}\u007f`)}`;
}

/** What one change records besides the copy. */
export interface JournalEntry {
  kind: JournalKind;
  rowKey: string;
  version: number;
  at: Date;
  reason: string | undefined;
  /** The write's id, the same on every attempt of one request. */
  write: string;
}

/**
 * The journal row of one change: its entry and, when the row fits the service's limits (1 MiB,
 * 252 properties, 255-character names), the written row's properties as sent (sealed values stay
 * sealed). Otherwise, and for rows whose values live elsewhere (`copies: false`), the key only.
 */
export function journalRow(
  partitionKey: string,
  seq: number,
  entry: JournalEntry,
  written: WireEntity | undefined,
  copies: boolean,
  limits: StoreLimits,
): WireEntity {
  const row: WireEntity = {
    partitionKey,
    rowKey: journalRowKey(seq),
    [FeedProperties.kind]: entry.kind,
    [FeedProperties.rowKey]: entry.rowKey,
    [FeedProperties.version]: entry.version,
    [FeedProperties.at]: entry.at,
    [FeedProperties.write]: entry.write,
  };
  if (entry.reason !== undefined) row[FeedProperties.reason] = entry.reason;
  if (written === undefined || !copies) {
    row[FeedProperties.carries] = "key";
    return row;
  }
  const withCopy: WireEntity = { ...row };
  withCopy[FeedProperties.carries] = entry.kind === "merge" ? "changes" : "entity";
  const type = written[ENTITY_TYPE_PROPERTY];
  if (type !== undefined) withCopy[FeedProperties.type] = type;
  for (const name in written) {
    if (name === "partitionKey" || name === "rowKey" || name === ENTITY_TYPE_PROPERTY) continue;
    if (name.startsWith(LIBRARY_PROPERTY_PREFIX) || name === "etag" || name === "timestamp") continue;
    const value = written[name];
    if (value === undefined) continue;
    if (COPY_PREFIX.length + name.length > 255) return { ...row, [FeedProperties.carries]: "key" };
    withCopy[`${COPY_PREFIX}${name}`] = value;
  }
  const size = wireEntityBytes(withCopy);
  if (size.bytes > limits.maxEntityBytes || size.properties > limits.maxProperties) {
    row[FeedProperties.carries] = "key";
    return row;
  }
  return withCopy;
}

/** The copy a journal row carries, as the entity's own row (its keys, `EntityType` and properties). */
export function copiedRow(partitionKey: string, journal: StoredEntity): WireEntity {
  const row: WireEntity = { partitionKey, rowKey: String(journal[FeedProperties.rowKey]) };
  const type = journal[FeedProperties.type];
  if (type !== undefined) row[ENTITY_TYPE_PROPERTY] = type;
  for (const name in journal) {
    if (!name.startsWith(COPY_PREFIX)) continue;
    row[name.slice(COPY_PREFIX.length)] = journal[name] as WireValue;
  }
  return row;
}
