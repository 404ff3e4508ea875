import { StoreError, TransactionError, ValidationError } from "../../errors.js";
import { AZURE_TABLE_LIMITS } from "../../util/store-limits.js";
import type { TableStore, TransactionAction, WriteResult } from "../table-store.js";
import { openGuard, openNew, type PartitionState, readPartitionState } from "./partition-markers.js";
import type { ShardDirectory } from "./shard-directory.js";
import { initialShardMap, placeOf, type ShardMap } from "./shard-map.js";

/** How long a write waits for a partition in cut-over before it gives up (about 30 s in all). */
const STALL_ATTEMPTS = 40;
/** Operations of a transaction kept for the partition's fence rows (partition-markers.ts). */
export const FENCE_ROWS = 2;

/** What a read found, for `PartitionRouter.read`: whether it may be incomplete and must be confirmed. */
export type ReadCheck<T> = (result: T) => boolean;

/**
 * Routes one partition's requests: to the shard the cached map names, and, when that shard says the
 * partition is not open there (its open row is gone), along the partition's markers to where it is.
 * The map is read from the directory once and again only on such a miss, so a failing directory
 * stops only the opening of new partitions, and a process with an old map still finds moved ones.
 */
export class PartitionRouter {
  readonly #shards: Readonly<Record<string, TableStore>>;
  readonly #directory: ShardDirectory;
  readonly #caseSensitiveTables: boolean;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #leaseMs: number;
  #map: ShardMap | undefined;
  /** False while the map is the configured shards' initial one because the directory did not answer. */
  #confirmed = false;
  /** When the map was last read from the directory (`performance.now()`). */
  #confirmedAt = Number.NEGATIVE_INFINITY;

  constructor(
    shards: Readonly<Record<string, TableStore>>,
    directory: ShardDirectory,
    caseSensitiveTables: boolean,
    timing: { sleep: (ms: number) => Promise<void>; leaseMs: number },
  ) {
    this.#shards = shards;
    this.#directory = directory;
    this.#caseSensitiveTables = caseSensitiveTables;
    this.#sleep = timing.sleep;
    this.#leaseMs = timing.leaseMs;
  }

  /** How long a map read from the directory is trusted for placing new partitions (addShard waits as long before its last scan). */
  get leaseMs(): number {
    return this.#leaseMs;
  }

  /** The map this process routes by (read from the directory on first use). */
  async map(): Promise<ShardMap> {
    if (this.#map === undefined) {
      try {
        await this.refresh();
      } catch (error) {
        if (error instanceof StoreError && error.serviceCode === "ShardMissing") throw error;
        // The directory is down: route by the configured shards' first map, which the partitions'
        // markers correct wherever it is stale; only opening a new partition waits for the directory.
        this.#map ??= initialShardMap(Object.keys(this.#shards));
      }
    }
    return this.#map as ShardMap;
  }

  /** Reads the map again from the directory. */
  async refresh(): Promise<ShardMap> {
    const { map } = await this.#directory.read();
    const missing = map.shards.filter((name) => !(name in this.#shards));
    if (missing.length > 0) {
      throw new StoreError(
        `the shard map (version ${map.version}) names shard(s) ${missing.join(", ")} this ShardedStore was not given`,
        { serviceCode: "ShardMissing" },
      );
    }
    if (this.#map === undefined || map.version >= this.#map.version) this.#map = map;
    this.#confirmed = true;
    this.#confirmedAt = performance.now();
    return map;
  }

  /** Replaces the cached map (after this process published it). */
  adopt(map: ShardMap): void {
    this.#map = map;
    this.#confirmed = true;
    this.#confirmedAt = performance.now();
  }

  /** The shard the cached map places the partition on. */
  async ownerOf(table: string, partitionKey: string): Promise<string> {
    return placeOf(await this.map(), table, partitionKey, this.#caseSensitiveTables);
  }

  shard(name: string): TableStore {
    const store = this.#shards[name];
    if (store === undefined) {
      throw new StoreError(
        `a partition's marker names shard '${name}', which this ShardedStore was not given`,
        {
          serviceCode: "ShardMissing",
        },
      );
    }
    return store;
  }

  /**
   * Submits `actions` with the open guard on the shard where the partition is open; follows a moved
   * partition, waits out a cut-over, and opens a partition new to its shard with its first write.
   */
  async write(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    const first = this.shard((await this.map()).shards[0] as string);
    const limit = (first.capabilities.limits ?? AZURE_TABLE_LIMITS).maxTransactionOperations;
    if (actions.length > limit - FENCE_ROWS) {
      throw new ValidationError(
        "transaction-size",
        `a ShardedStore transaction takes at most ${limit - FENCE_ROWS} operations (the partition's fence rows take the rest)`,
      );
    }
    let target = await this.ownerOf(table, partitionKey);
    let placed = false;
    for (let attempt = 0; attempt < STALL_ATTEMPTS; attempt++) {
      const store = this.shard(target);
      try {
        return (
          await store.submitTransaction(table, partitionKey, [openGuard(partitionKey), ...actions])
        ).slice(1);
      } catch (error) {
        if (!isGuardMiss(error)) throw withoutFence(error, 1);
      }
      // Not open here. New to this shard? Open it with this write, in one transaction that fails if
      // the partition was open or has a state row here (moved away, or moving in).
      if (!placed) {
        placed = true;
        if (await this.#refreshIfStale()) {
          const owner = await this.ownerOf(table, partitionKey);
          if (owner !== target) {
            target = owner;
            continue;
          }
        }
      }
      // Without a map confirmed by the directory a new partition's shard is not certain: only follow markers.
      if (this.#confirmed) {
        try {
          return (
            await store.submitTransaction(table, partitionKey, [...openNew(partitionKey), ...actions])
          ).slice(FENCE_ROWS);
        } catch (error) {
          const conflictAt = error instanceof TransactionError && error.statusCode === 409 ? error.index : -1;
          if (conflictAt === 0) continue; // another write opened it first: through the guard again
          if (conflictAt !== 1) throw withoutFence(error, FENCE_ROWS);
        }
      }
      const state = await readPartitionState(store, table, partitionKey);
      if (state.kind === "absent" && !this.#confirmed) {
        throw new StoreError(
          `cannot open partition '${partitionKey}' of table ${table}: the shard directory did not answer, so its shard is not certain`,
          { statusCode: 503, serviceCode: "ShardDirectoryUnavailable" },
        );
      }
      if (state.kind === "moved") {
        target = state.to;
        await this.#tryRefresh();
      } else if (state.kind === "incoming" || state.kind === "ready") {
        const source = await readPartitionState(this.shard(state.from), table, partitionKey);
        if (source.kind === "open") target = state.from;
        // Neither side is open: the partition is in its cut-over; wait for it to open on its new shard.
        else await this.#sleep(backoff(attempt));
      }
    }
    throw new StoreError(
      `partition '${partitionKey}' of table ${table} stayed in a shard cut-over too long`,
      {
        statusCode: 503,
        serviceCode: "PartitionMoving",
      },
    );
  }

  /**
   * Runs `read` where the partition's rows are complete. A result `needsCheck` does not flag (a point
   * read's hit: a row a fenced shard still holds equals the moved one) is returned at once; any other
   * is confirmed by the partition's markers after it, and read again elsewhere if they moved on.
   */
  async read<T>(
    table: string,
    partitionKey: string,
    read: (store: TableStore) => Promise<T>,
    needsCheck: ReadCheck<T>,
  ): Promise<T> {
    let target = await this.ownerOf(table, partitionKey);
    let refreshed = false;
    for (let attempt = 0; attempt < STALL_ATTEMPTS; attempt++) {
      const result = await read(this.shard(target));
      if (!needsCheck(result)) return result;
      const state = await readPartitionState(this.shard(target), table, partitionKey);
      if (state.kind === "open") return result;
      const readable = await this.#readable(target, state, table, partitionKey);
      if (readable === undefined) {
        // Found on no shard: a newer map may place it elsewhere (a partition opened since, by another process).
        if (refreshed || !(await this.#refreshIfStale())) return result;
        refreshed = true;
        target = await this.ownerOf(table, partitionKey);
        continue;
      }
      if (readable === target) return result;
      const moved = await read(this.shard(readable));
      if (!needsCheck(moved)) return moved;
      const after = await readPartitionState(this.shard(readable), table, partitionKey);
      if ((await this.#readable(readable, after, table, partitionKey)) === readable) return moved;
      target = readable;
    }
    throw new StoreError(`partition '${partitionKey}' of table ${table} kept moving while it was read`, {
      statusCode: 503,
      serviceCode: "PartitionMoving",
    });
  }

  /**
   * The highest map version all of whose moves are finished, as far as one directory read tells: the
   * cached map's, or the version before a move still pending; 0 when the directory does not answer.
   */
  async settledVersion(): Promise<number> {
    try {
      const map = await this.map();
      const pending = await this.#directory.pendingMove();
      return pending === undefined ? map.version : Math.min(map.version, pending.target.version - 1);
    } catch {
      return 0;
    }
  }

  /** The shard whose rows of the partition are complete now, or `undefined` when no shard has it. */
  async readableShard(table: string, partitionKey: string): Promise<string | undefined> {
    const owner = await this.ownerOf(table, partitionKey);
    const state = await readPartitionState(this.shard(owner), table, partitionKey);
    return this.#readable(owner, state, table, partitionKey);
  }

  /**
   * Where the partition's rows are complete, starting from what shard `at` says of it: a shard it
   * moved to once that one is ready or open, else the shard it left (which keeps every row, fenced,
   * until the new one is ready).
   */
  async #readable(
    at: string,
    state: PartitionState,
    table: string,
    partitionKey: string,
    hops = 0,
  ): Promise<string | undefined> {
    switch (state.kind) {
      case "open":
      case "ready":
        return at;
      case "absent":
        return undefined;
      case "moved": {
        const next = await readPartitionState(this.shard(state.to), table, partitionKey);
        if (next.kind === "incoming" || next.kind === "absent") return at;
        if (next.kind === "moved" && hops < 4)
          return this.#readable(state.to, next, table, partitionKey, hops + 1);
        return state.to;
      }
      case "incoming": {
        const source = await readPartitionState(this.shard(state.from), table, partitionKey);
        return source.kind === "open" || source.kind === "moved" ? state.from : at;
      }
    }
  }

  /**
   * Re-reads the map unless it was read less than the lease ago; true when it was re-read (a partition
   * new to its shard is placed by a map at most that old: addShard waits as long before its last scan).
   */
  async #refreshIfStale(): Promise<boolean> {
    if (performance.now() - this.#confirmedAt < this.#leaseMs) return false;
    return this.#tryRefresh();
  }

  /** Re-reads the map; false when the directory did not answer (the cached map stays). */
  async #tryRefresh(): Promise<boolean> {
    try {
      await this.refresh();
      return true;
    } catch (error) {
      if (error instanceof StoreError && error.serviceCode === "ShardMissing") throw error;
      return false;
    }
  }
}

/**
 * True when a fenced transaction failed on its guard (its first action): the partition is not open on
 * that shard. The guard goes first so that it is what fails there, before an update or delete of a row
 * that shard no longer holds would.
 */
function isGuardMiss(error: unknown): boolean {
  return (
    error instanceof TransactionError &&
    error.index === 0 &&
    error.statusCode === 404 &&
    error.serviceCode !== "TableNotFound"
  );
}

/** The failure as the caller's own actions see it: a transaction's index counted without the fence rows before them. */
function withoutFence(error: unknown, fenceRows: number): unknown {
  if (!(error instanceof TransactionError)) return error;
  return new TransactionError(
    {
      index: Math.max(0, error.index - fenceRows),
      table: error.table,
      partitionKey: error.partitionKey,
      rowKey: error.rowKey,
      statusCode: error.statusCode,
      serviceCode: error.serviceCode,
    },
    { cause: error.cause ?? error, outcomeUnknown: error.outcomeUnknown },
  );
}

function backoff(attempt: number): number {
  return Math.min(1000, 5 * 2 ** Math.min(attempt, 8));
}
