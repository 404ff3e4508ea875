import { ConcurrencyError, StoreError, ValidationError } from "../../errors.js";
import type { StoreContinuation, TableStore } from "../table-store.js";
import { MARKER_PREFIX, OPEN_ROW, STATE_ROW } from "./partition-markers.js";
import { movePartition } from "./partition-move.js";
import type { PartitionRouter } from "./partition-router.js";
import { DIRECTORY_TABLE, type ShardDirectory } from "./shard-directory.js";
import { placeOf, type ShardMap, withShard } from "./shard-map.js";

/** Where `addShard` is, after each partition it moved (and once as it starts and ends). */
export interface ReshardProgress {
  /** `start`: the plan is made; `copied`: a partition's rows are copied, writers still on the old shard; `moved`: a partition is open on the new shard; `done`: the new map is published. */
  readonly step: "start" | "copied" | "moved" | "done";
  readonly table?: string | undefined;
  readonly partitionKey?: string | undefined;
  /** Partitions moved so far, of `totalPartitions` planned (the count grows if a rescan finds more). */
  readonly partitions: number;
  readonly totalPartitions: number;
  readonly rows: number;
  /** The longest write stall of a partition's cut-over so far, in milliseconds. */
  readonly longestStallMs: number;
}

/** What `addShard` did. */
export interface ReshardResult {
  /** Partitions moved to the new shard. */
  partitions: number;
  /** Their rows. */
  rows: number;
  /** The longest time a partition's writes waited for its cut-over, in milliseconds. */
  longestStallMs: number;
  /** The map now published. */
  version: number;
}

/** What `addShardOnline` needs of the store. */
export interface AddShardContext {
  readonly name: string;
  readonly shards: Readonly<Record<string, TableStore>>;
  readonly router: PartitionRouter;
  readonly directory: ShardDirectory;
  readonly onProgress?: ((progress: ReshardProgress) => void | Promise<void>) | undefined;
  readonly now?: (() => number) | undefined;
  readonly sleep: (ms: number) => Promise<void>;
  /** The ETag of the recorded move to take over (`db.repair()` resuming it): the record must still be that one. */
  readonly takeOver?: string | undefined;
}

interface Planned {
  readonly table: string;
  readonly partitionKey: string;
  readonly from: string;
  /** Only the old shard's `moved` mark is left: done, unless a crash stopped it before it opened. */
  readonly movedAway: boolean;
}

/**
 * Adds shard `name`: records the move in the directory, creates every table on the new shard, moves
 * each partition the new map places there (partition-move.ts), publishes the new map, then looks
 * once more for partitions opened on old shards meanwhile by processes with the old map, and ends
 * the move. Run again after a crash, it finds the recorded move and resumes it (each partition's
 * markers tell how far it got).
 */
export async function addShardOnline(context: AddShardContext): Promise<ReshardResult> {
  const { name, shards, router, directory } = context;
  const now = context.now ?? (() => performance.now());
  const stored = await directory.read();
  const pending = await directory.pendingMove();
  if (pending !== undefined && pending.shard !== name) {
    throw new ValidationError("shard", `shard '${pending.shard}' is being added; run addShard for it first`);
  }
  if (pending === undefined && stored.map.shards.includes(name)) {
    return { partitions: 0, rows: 0, longestStallMs: 0, version: stored.map.version };
  }
  const target: ShardMap = pending?.target ?? withShard(stored.map, name);
  const move = { shard: name, target };
  let claim = await directory.beginMove(move, context.takeOver);
  // Each step stamps the record, so a repair takes over only a move whose mover stopped stamping it,
  // and a mover whose move was taken over stops at its next step.
  const stamp = async (): Promise<void> => {
    claim = await directory.stampMove(move, claim);
  };
  const newShard = shards[name] as TableStore;
  const oldShards = stored.map.shards.filter((shard) => shard !== name);

  const tables = await tablesOf(oldShards.map((shard) => shards[shard] as TableStore));
  for (const table of tables) await newShard.createTable(table);

  const result: ReshardResult = { partitions: 0, rows: 0, longestStallMs: 0, version: target.version };
  let total = 0;
  const report = async (step: ReshardProgress["step"], at?: Planned): Promise<void> => {
    await context.onProgress?.({
      step,
      table: at?.table,
      partitionKey: at?.partitionKey,
      partitions: result.partitions,
      totalPartitions: total,
      rows: result.rows,
      longestStallMs: result.longestStallMs,
    });
  };
  const moveAll = async (planned: readonly Planned[]): Promise<void> => {
    for (const p of planned) {
      await stamp();
      const moved = await movePartition({
        table: p.table,
        partitionKey: p.partitionKey,
        from: p.from,
        to: name,
        source: shards[p.from] as TableStore,
        target: newShard,
        afterCopy: () => report("copied", p),
        now,
        mapVersion: target.version,
      });
      if (moved === undefined) continue;
      result.partitions++;
      result.rows += moved.rows;
      result.longestStallMs = Math.max(result.longestStallMs, moved.stallMs);
      await report("moved", p);
    }
  };

  const first = await plan(shards, oldShards, tables, target, name);
  total = first.length;
  await report("start");
  await moveAll(first);
  await stamp();
  await publish(directory, router, target);
  // Processes still on the old map may have opened partitions the new map places here meanwhile: a
  // process places a new partition by a map at most a lease old, so after one lease none does any more.
  await context.sleep(router.leaseMs);
  const late = (await plan(shards, oldShards, tables, target, name)).filter((p) => !p.movedAway);
  total += late.length;
  await moveAll(late);
  await directory.endMove(claim);
  await report("done");
  return result;
}

/** The partitions on the old shards that the new map places on the new shard and are not moved yet. */
async function plan(
  shards: Readonly<Record<string, TableStore>>,
  oldShards: readonly string[],
  tables: readonly string[],
  target: ShardMap,
  name: string,
): Promise<Planned[]> {
  const planned: Planned[] = [];
  for (const from of oldShards) {
    const store = shards[from] as TableStore;
    for (const table of tables) {
      for (const [partitionKey, movedAway] of await partitionsOf(store, table)) {
        if (placeOf(target, table, partitionKey, caseSensitive(store)) !== name) continue;
        planned.push({ table, partitionKey, from, movedAway });
      }
    }
  }
  return planned;
}

/**
 * Each partition of a table on one shard, and whether only its `moved` mark is left there. One scan
 * of the table (every row is read once: a table scan is the only way to list partitions).
 */
async function partitionsOf(store: TableStore, table: string): Promise<Map<string, boolean>> {
  const found = new Map<string, { rows: boolean; open: boolean; state: boolean }>();
  let continuation: StoreContinuation | undefined;
  do {
    const page = await store.queryPage(table, { select: ["PartitionKey", "RowKey"], continuation });
    for (const row of page.items) {
      const seen = found.get(row.partitionKey) ?? { rows: false, open: false, state: false };
      if (row.rowKey === OPEN_ROW) seen.open = true;
      else if (row.rowKey === STATE_ROW) seen.state = true;
      else if (!row.rowKey.startsWith(MARKER_PREFIX)) seen.rows = true;
      found.set(row.partitionKey, seen);
    }
    continuation = page.continuation;
  } while (continuation !== undefined);
  // A state row without an open row: the partition left this shard (its move may still need finishing,
  // which movePartition does from the new shard's side when the move is resumed).
  return new Map([...found].map(([key, seen]) => [key, seen.state && !seen.open && !seen.rows]));
}

/** The union of the tables on the old shards (tablekit's own shard-map table aside). */
async function tablesOf(stores: readonly TableStore[]): Promise<string[]> {
  const lists = await Promise.all(stores.map((store) => store.listTables()));
  return [...new Set(lists.flat())].filter((table) => table !== DIRECTORY_TABLE).sort();
}

/** Publishes the new map (conditionally on the one read: only one mover wins) and routes by it here. */
async function publish(directory: ShardDirectory, router: PartitionRouter, target: ShardMap): Promise<void> {
  const current = await directory.read();
  if (current.map.version < target.version) {
    try {
      await directory.publish(target, current.etag);
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      const again = await directory.read();
      if (again.map.version !== target.version) {
        throw new StoreError("the shard map changed while a shard was being added", { cause: error });
      }
    }
  }
  router.adopt(target);
}

function caseSensitive(store: TableStore): boolean {
  return store.capabilities.limits?.caseSensitiveTableNames ?? false;
}
