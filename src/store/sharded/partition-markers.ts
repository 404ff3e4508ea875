import type { StoredEntity, TableStore, TransactionAction } from "../table-store.js";
import { escapeODataString } from "./filter-partition.js";

/**
 * The rows `ShardedStore` keeps inside a partition, beside the user's, to fence moves (hidden from
 * every read through it; their RowKeys are reserved):
 * - the **open** row exists exactly while the partition is written on this shard: every write goes as
 *   an entity group transaction that also merges it (`If-Match: *`), so once a move deletes it no
 *   write, from a process with whatever map, lands on this shard;
 * - the **state** row says where a partition that is not open here is: `moved` to a shard (on the
 *   shard it left), or `incoming` / `ready` from a shard (on the shard it is moving to, before and after
 *   its rows are complete there).
 */
export const MARKER_PREFIX = "~tablekit~shard~";
export const OPEN_ROW = `${MARKER_PREFIX}open`;
export const STATE_ROW = `${MARKER_PREFIX}state`;

/** What a shard says of a partition. */
export type PartitionState =
  | { readonly kind: "open" }
  | { readonly kind: "moved"; readonly to: string }
  | { readonly kind: "incoming" | "ready"; readonly from: string }
  | { readonly kind: "absent" };

/** True for a row `ShardedStore` keeps for itself. */
export function isMarkerRow(rowKey: string | undefined): boolean {
  return rowKey?.startsWith(MARKER_PREFIX) === true;
}

/** One request: the partition's marker rows on `store`; a missing table reads as absent. */
export async function readPartitionState(
  store: TableStore,
  table: string,
  partitionKey: string,
): Promise<PartitionState> {
  const filter = `PartitionKey eq '${escapeODataString(partitionKey)}' and RowKey ge '${MARKER_PREFIX}' and RowKey lt '${MARKER_PREFIX}~'`;
  let rows: StoredEntity[];
  try {
    rows = (await store.queryPage(table, { filter })).items;
  } catch (error) {
    if (isTableNotFound(error)) return { kind: "absent" };
    throw error;
  }
  if (rows.some((row) => row.rowKey === OPEN_ROW)) return { kind: "open" };
  const state = rows.find((row) => row.rowKey === STATE_ROW);
  if (state === undefined || state.state === "open") return { kind: "absent" };
  if (state.state === "moved") return { kind: "moved", to: String(state.shard) };
  return { kind: state.state === "ready" ? "ready" : "incoming", from: String(state.shard) };
}

/** The action every fenced write adds to its transaction: it fails unless the partition is open here. */
export function openGuard(partitionKey: string): TransactionAction {
  return { kind: "update", entity: { partitionKey, rowKey: OPEN_ROW }, mode: "merge", ifMatch: "*" };
}

/** The action that opens a partition here (fails if it is open already). */
export function openInsert(partitionKey: string): TransactionAction {
  return { kind: "insert", entity: { partitionKey, rowKey: OPEN_ROW } };
}

/**
 * The actions that open a partition new to this shard with its first write: the open row, and a state
 * row saying `open` whose insert fails when the partition has a state here (it moved away, or is
 * moving in), so a process with an old map cannot reopen a partition a move left.
 */
export function openNew(partitionKey: string): TransactionAction[] {
  return [
    openInsert(partitionKey),
    { kind: "insert", entity: { partitionKey, rowKey: STATE_ROW, state: "open" } },
  ];
}

/**
 * The state row's entity. A `moved` row also names the version of the map its move leads to: once no
 * move up to that version is pending, the partition is open on its new shard (merged-query.ts).
 */
export function stateRow(
  partitionKey: string,
  state: "moved" | "incoming" | "ready",
  shard: string,
  mapVersion?: number,
) {
  return {
    partitionKey,
    rowKey: STATE_ROW,
    state,
    shard,
    ...(mapVersion === undefined ? {} : { mapVersion }),
  };
}

/** The service's 404 for a missing table, as every store reports it. */
export function isTableNotFound(error: unknown): boolean {
  const e = error as { statusCode?: number; serviceCode?: string };
  return e?.statusCode === 404 && e.serviceCode === "TableNotFound";
}
