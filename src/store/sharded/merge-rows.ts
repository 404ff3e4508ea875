import type { StoredEntity } from "../table-store.js";
import { escapeODataString, partitionRangeOf } from "./filter-partition.js";
import { isMarkerRow, STATE_ROW } from "./partition-markers.js";

/** A row's keys, [PartitionKey, RowKey]: the order a merged query takes rows in. */
export type Key = readonly [string, string];

/** The partition a shard's page ends in; `pastState`: the page (or one before it) held its state row and a row after it. */
export interface Tail {
  readonly partitionKey: string;
  readonly pastState: boolean;
}

/** `select` with the keys added (a merge orders by them and hides marker rows by RowKey). */
export function withKeys(select: readonly string[] | undefined): readonly string[] | undefined {
  if (select === undefined || select.length === 0) return select;
  return [...new Set([...select, "PartitionKey", "RowKey"])];
}

/** The row without the keys (and the state-row column) `select` did not name, as the service would answer. */
export function stripKeys(row: StoredEntity, select: readonly string[] | undefined): StoredEntity {
  if (select === undefined || select.length === 0) return row;
  const copy: Record<string, unknown> = { ...row };
  if (!select.includes("PartitionKey")) delete copy.partitionKey;
  if (!select.includes("RowKey")) delete copy.rowKey;
  for (const column of STATE_COLUMNS) if (!select.includes(column)) delete copy[column];
  return copy as StoredEntity;
}

/** The state row's columns a merged query reads: where a partition went, and by which map (partition-markers.ts). */
const STATE_COLUMNS = ["state", "mapVersion"];

/**
 * A shard's query in a sorted merge: the user's filter, `or` the `moved` state rows of the partitions
 * it can match (kept to its top-level PartitionKey range, so a range stays a range); the state columns
 * selected. Without a filter every row comes anyway.
 */
export function withStateRows(filter: string | undefined, select: readonly string[] | undefined) {
  const movedRows = `RowKey eq '${STATE_ROW}' and state eq 'moved'`;
  const range = partitionRangeOf(filter);
  return {
    filter:
      filter === undefined
        ? undefined
        : `(${filter}) or (${range === undefined ? movedRows : `${range} and ${movedRows}`})`,
    select:
      select === undefined || select.length === 0 ? select : [...new Set([...select, ...STATE_COLUMNS])],
  };
}

/** One partition's rows past `past` (a RowKey), matching the user's filter. */
export function partitionFilter(
  partitionKey: string,
  past: string | undefined,
  filter: string | undefined,
): string {
  const parts = [`PartitionKey eq '${escapeODataString(partitionKey)}'`];
  if (past !== undefined) parts.push(`RowKey gt '${escapeODataString(past)}'`);
  if (filter !== undefined) parts.push(`(${filter})`);
  return parts.join(" and ");
}

/**
 * The partition a page ends in, and whether the page ends past its state row: the page (or, for a
 * partition it continues, an earlier one) holds the state row and either a row of it after that or as
 * many rows as were asked for (it may have stopped right after the state row). Only then can the next
 * page hold rows of it and no state row to tell that it moved meanwhile; a page that stopped short of
 * `top` stopped at the partition's end (the service breaks pages at partitions).
 */
export function tailOf(
  items: readonly StoredEntity[],
  before: Tail | undefined,
  full: boolean,
  departed: (row: StoredEntity) => boolean,
): Tail | undefined {
  const partitionKey = items.at(-1)?.partitionKey;
  if (partitionKey === undefined) return before;
  let pastState = before?.partitionKey === partitionKey && before.pastState;
  let rowAfter = false;
  for (let i = items.length - 1; i >= 0 && items[i]?.partitionKey === partitionKey; i--) {
    const rowKey = items[i]?.rowKey;
    if (rowKey === STATE_ROW) {
      // A partition whose move had finished when the query began has no rows here any more.
      const settledAway = items[i]?.state === "moved" && !departed(items[i] as StoredEntity);
      pastState ||= !settledAway && (rowAfter || full);
      break;
    }
    if (!isMarkerRow(rowKey)) rowAfter = true;
  }
  return { partitionKey, pastState };
}

export function keyOf(row: StoredEntity): Key {
  return [row.partitionKey, row.rowKey];
}

/** Ordinal comparison, as the service orders keys. */
export function compare(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}
