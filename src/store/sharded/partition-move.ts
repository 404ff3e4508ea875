import { StoreError } from "../../errors.js";
import type { StoredEntity, TableStore, TransactionAction } from "../table-store.js";
import {
  listPartitionBlobs,
  partitionBlobs,
  readPartitionRows,
  sameRow,
  submitInBatches,
  wireOf,
} from "./partition-copy.js";
import { OPEN_ROW, openInsert, readPartitionState, STATE_ROW, stateRow } from "./partition-markers.js";

/** One partition to move from one shard to another. */
export interface PartitionMove {
  readonly table: string;
  readonly partitionKey: string;
  readonly from: string;
  readonly to: string;
  readonly source: TableStore;
  readonly target: TableStore;
  /** Awaited after the bulk copy, before the fence: writers go on meanwhile (tests interleave here). */
  readonly afterCopy?: (() => Promise<void>) | undefined;
  /** Milliseconds now, for the stall measure. */
  readonly now: () => number;
  /** The version of the map the move leads to (recorded on the old shard's `moved` row). */
  readonly mapVersion: number;
}

/** What moving one partition did. */
export interface PartitionMoveResult {
  /** User rows now on the new shard. */
  readonly rows: number;
  /** How long writes to the partition were fenced (fence to open), in milliseconds. */
  readonly stallMs: number;
}

/**
 * Moves one partition online (Vitess's copy, catch up, cut over, verify, clean up, per partition):
 * 1. mark it `incoming` on the new shard (writers there follow the mark back to the old shard);
 * 2. copy its rows and large-value blobs while writers go on;
 * 3. fence: one transaction deletes the old shard's open row and marks it `moved` (every write after it
 *    fails its guard and follows the mark);
 * 4. catch up what changed since the copy, verify both sides row by row, mark the new shard `ready`;
 * 5. delete the old rows, then open the partition on the new shard (state row out, open row in).
 * Writes wait only from 3 to 5. Each step can be taken again, so a move cut short resumes from the
 * states the two shards' markers show; `undefined` when the partition had moved already.
 */
export async function movePartition(move: PartitionMove): Promise<PartitionMoveResult | undefined> {
  const { table, partitionKey, source, target } = move;
  let sourceState = await readPartitionState(source, table, partitionKey);
  let targetState = await readPartitionState(target, table, partitionKey);
  // Moved already (by an earlier run), or only a crash's stray state left on the new shard.
  const elsewhere =
    sourceState.kind === "moved" && (sourceState.to !== move.to || targetState.kind === "absent");
  if (targetState.kind === "open" || elsewhere) {
    return undefined;
  }
  let fencedAt = move.now();
  if (sourceState.kind !== "moved") {
    if (targetState.kind === "absent") {
      await target.upsert(table, stateRow(partitionKey, "incoming", move.from), "replace");
    }
    await copyRows(move);
    await copyBlobs(move);
    await move.afterCopy?.();
    if (sourceState.kind === "absent") await openLegacy(source, table, partitionKey);
    fencedAt = move.now();
    await source.submitTransaction(table, partitionKey, [
      { kind: "delete", partitionKey, rowKey: OPEN_ROW, ifMatch: "*" },
      { kind: "upsert", entity: stateRow(partitionKey, "moved", move.to, move.mapVersion), mode: "replace" },
    ]);
    sourceState = { kind: "moved", to: move.to };
    targetState = { kind: "incoming", from: move.from };
  }
  let rows = 0;
  if (targetState.kind !== "ready") {
    rows = await catchUp(move);
    await copyBlobs(move);
    await target.upsert(table, stateRow(partitionKey, "ready", move.from), "replace");
  }
  // Highest RowKey first: a scan that reads the old shard meanwhile sees a prefix of the rows and the
  // partition's state row (never deleted), which sends it to the new shard for the rest (merged-query.ts).
  const leftover = (await readPartitionRows(source, table, partitionKey)).reverse();
  const deletes: TransactionAction[] = leftover.map((row) => ({
    kind: "delete",
    partitionKey,
    rowKey: row.rowKey,
    ifMatch: "*",
  }));
  await submitInBatches(source, table, partitionKey, deletes);
  await target.submitTransaction(table, partitionKey, [
    { kind: "delete", partitionKey, rowKey: STATE_ROW, ifMatch: "*" },
    openInsert(partitionKey),
  ]);
  const stallMs = move.now() - fencedAt;
  await deleteCopiedBlobs(move);
  return { rows: rows || (await readPartitionRows(target, table, partitionKey)).length, stallMs };
}

/** Copies every row of the partition to the new shard (replacing what an earlier attempt left). */
async function copyRows(move: PartitionMove): Promise<void> {
  const rows = await readPartitionRows(move.source, move.table, move.partitionKey, { typed: true });
  const upserts: TransactionAction[] = rows.map((row) => ({
    kind: "upsert",
    entity: wireOf(row),
    mode: "replace",
  }));
  await submitInBatches(move.target, move.table, move.partitionKey, upserts);
}

/**
 * Under the fence: makes the new shard's rows equal the old shard's (rows changed or added since the
 * copy written again, rows deleted since removed), then reads both again and compares them (VDiff).
 */
async function catchUp(move: PartitionMove): Promise<number> {
  const { table, partitionKey } = move;
  // Typed reads (where the shards have them): a whole Double is copied and compared as a Double.
  const [before, copied] = await Promise.all([
    readPartitionRows(move.source, table, partitionKey, { typed: true }),
    readPartitionRows(move.target, table, partitionKey, { typed: true }),
  ]);
  const copiedByKey = new Map(copied.map((row) => [row.rowKey, row]));
  const sourceKeys = new Set(before.map((row) => row.rowKey));
  const actions: TransactionAction[] = [
    ...before
      .filter((row) => {
        const there = copiedByKey.get(row.rowKey);
        return there === undefined || !sameRow(row, there);
      })
      .map((row): TransactionAction => ({ kind: "upsert", entity: wireOf(row), mode: "replace" })),
    ...copied
      .filter((row) => !sourceKeys.has(row.rowKey))
      .map((row): TransactionAction => ({ kind: "delete", partitionKey, rowKey: row.rowKey, ifMatch: "*" })),
  ];
  await submitInBatches(move.target, table, partitionKey, actions);
  const after = await readPartitionRows(move.target, table, partitionKey, { typed: true });
  verify(move, before, after);
  return after.length;
}

function verify(move: PartitionMove, source: readonly StoredEntity[], target: readonly StoredEntity[]): void {
  const same =
    source.length === target.length && source.every((row, i) => sameRow(row, target[i] as StoredEntity));
  if (!same) {
    throw new StoreError(
      `verifying the move of partition '${move.partitionKey}' of table ${move.table} from shard ${move.from} to ${move.to} found the copies differ; run addShard again to resume`,
      { serviceCode: "ShardMoveVerifyFailed" },
    );
  }
}

/** A partition written before the store was sharded has no open row: open it so the fence can close it. */
async function openLegacy(store: TableStore, table: string, partitionKey: string): Promise<void> {
  try {
    await store.submitTransaction(table, partitionKey, [openInsert(partitionKey)]);
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 409) throw error;
  }
}

/** Copies the partition's large-value blobs the new shard does not have yet. */
async function copyBlobs(move: PartitionMove): Promise<void> {
  const from = move.source.blobs;
  const to = move.target.blobs;
  if (from === undefined || to === undefined) return;
  const { container } = partitionBlobs(move.table, move.partitionKey);
  const [names, present] = await Promise.all([
    listPartitionBlobs(from, move.table, move.partitionKey),
    listPartitionBlobs(to, move.table, move.partitionKey),
  ]);
  const have = new Set(present);
  for (const name of names) {
    if (have.has(name)) continue;
    const data = await from.get(container, name);
    if (data !== undefined) await to.put(container, name, data);
  }
}

/** Deletes from the old shard the blobs the new one holds (a blob written there since stays, readable). */
async function deleteCopiedBlobs(move: PartitionMove): Promise<void> {
  const from = move.source.blobs;
  const to = move.target.blobs;
  if (from === undefined || to === undefined) return;
  const { container } = partitionBlobs(move.table, move.partitionKey);
  const copied = new Set(await listPartitionBlobs(to, move.table, move.partitionKey));
  for (const name of await listPartitionBlobs(from, move.table, move.partitionKey)) {
    if (copied.has(name)) await from.delete(container, name);
  }
}
