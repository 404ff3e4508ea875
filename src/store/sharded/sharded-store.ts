import {
  ConcurrencyError,
  EntityAlreadyExistsError,
  EntityNotFoundError,
  SchemaError,
  StoreError,
  TableKitError,
  TransactionError,
  ValidationError,
} from "../../errors.js";
import { MAX_TIMER_MS } from "../../util/long-timeout.js";
import { AZURE_TABLE_LIMITS } from "../../util/store-limits.js";
import { deletedUnlessAbsent } from "../delete-outcome.js";
import type {
  BlobStore,
  PropertyTypes,
  StoreCapabilities,
  StoredEntity,
  StorePage,
  StoreQuery,
  StoreRepairOptions,
  TableStore,
  TransactionAction,
  WireEntity,
  WriteMode,
  WriteResult,
} from "../table-store.js";
import { singlePartitionOf } from "./filter-partition.js";
import { stripKeys, withKeys } from "./merge-rows.js";
import { queryAcrossShards } from "./merged-query.js";
import { isMarkerRow } from "./partition-markers.js";
import { FENCE_ROWS, PartitionRouter } from "./partition-router.js";
import { DIRECTORY_TABLE, ShardDirectory } from "./shard-directory.js";
import { addShardOnline, type ReshardProgress, type ReshardResult } from "./shard-mover.js";
import { ShardedBlobs } from "./sharded-blobs.js";

/** Options of `new ShardedStore`. */
export interface ShardedStoreOptions {
  /** The shards by name (one store per storage account), at least one. */
  shards: Readonly<Record<string, TableStore>>;
  /** The shard that keeps the shard map; default: the lexicographically first name. */
  directory?: string | undefined;
  /** Waits between attempts while a partition is in its cut-over (tests inject it); default: a timer. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /**
   * How long a shard map read from the directory is trusted for placing a partition new to every
   * shard, in milliseconds (default 1,000): a process re-reads the map for such a write at most this
   * often, and `addShard` waits this long after publishing its map before its last scan, so it
   * catches partitions opened meanwhile by processes with the old map. Give every process the same.
   * A whole number from 0 to 2,147,483,647 (Node's longest timer); anything else is a `ValidationError`.
   */
  mapLeaseMs?: number | undefined;
}

/**
 * `mapLeaseMs`, checked: `addShard` waits one lease before its last scan, and NaN, a negative lease or
 * one beyond Node's timer limit (a longer `setTimeout` fires after 1 ms) would end that wait at once, so
 * a partition opened meanwhile by a process with the old map could stay on the old shard. A whole
 * number of milliseconds, as the context's other timings.
 */
function mapLeaseOf(mapLeaseMs: number | undefined): number {
  if (mapLeaseMs === undefined) return 1000;
  if (!Number.isSafeInteger(mapLeaseMs) || mapLeaseMs < 0 || mapLeaseMs > MAX_TIMER_MS) {
    throw new ValidationError(
      "map-lease",
      `mapLeaseMs must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(mapLeaseMs)}`,
      { field: "mapLeaseMs" },
    );
  }
  return mapLeaseMs;
}

/** Options of `ShardedStore.addShard`. */
export interface AddShardOptions {
  /** Called after each step of the move. */
  onProgress?: ((progress: ReshardProgress) => void | Promise<void>) | undefined;
}

/**
 * A store over several stores (storage accounts) that places each (table, PartitionKey) wholly on one
 * of them by jump consistent hashing, so entity group transactions stay on one account. Table
 * operations apply to every shard; a query confined to one partition goes to its shard, any other
 * reads every shard and merges them in key order behind one continuation. See docs/sharding.md.
 *
 * @example
 * ```ts
 * const store = new ShardedStore({ shards: { a: storeA, b: storeB, c: storeC } });
 * const db = new TableContext({ store });
 * ```
 */
export class ShardedStore implements TableStore {
  readonly name = "sharded";
  readonly capabilities: StoreCapabilities;
  readonly blobs: BlobStore | undefined;
  readonly #shards: Record<string, TableStore>;
  readonly #directoryName: string;
  readonly #router: PartitionRouter;
  readonly #directory: ShardDirectory;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: ShardedStoreOptions) {
    const names = Object.keys(options.shards).sort();
    if (names.length === 0) throw new ValidationError("shards", "a ShardedStore needs at least one shard");
    const directory = options.directory ?? (names[0] as string);
    if (!names.includes(directory)) {
      throw new ValidationError("directory", `the directory shard '${directory}' is not one of the shards`);
    }
    this.#shards = { ...options.shards };
    const first = this.#shards[names[0] as string] as TableStore;
    for (const name of names) checkSameCapabilities(first, name, this.#shards[name] as TableStore);
    const limits = first.capabilities.limits ?? AZURE_TABLE_LIMITS;
    this.capabilities = {
      ...first.capabilities,
      // Two operations of every transaction are kept for the partition's fence rows (partition-markers.ts).
      limits: {
        ...limits,
        maxTransactionOperations: limits.maxTransactionOperations - FENCE_ROWS,
        // Room for the fence rows' sub-requests in the `$batch` body (each well under 1 KiB).
        maxTransactionBytes: limits.maxTransactionBytes - FENCE_ROWS * 1024,
      },
    };
    this.#directoryName = directory;
    this.#directory = new ShardDirectory(this.#shards[directory] as TableStore, names);
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
    this.#sleep = sleep;
    this.#router = new PartitionRouter(this.#shards, this.#directory, limits.caseSensitiveTableNames, {
      sleep,
      leaseMs: mapLeaseOf(options.mapLeaseMs),
    });
    this.blobs = names.every((name) => this.#shards[name]?.blobs !== undefined)
      ? new ShardedBlobs(this.#router, this.#shards)
      : undefined;
  }

  /** The shards' names, in ascending order. */
  get shardNames(): string[] {
    return Object.keys(this.#shards).sort();
  }

  /** The name of the shard that keeps the shard map. */
  get directoryShard(): string {
    return this.#directoryName;
  }

  /** The shard map this process routes by: its version and the shards in the order they were added. */
  async shardMap(): Promise<{ version: number; shards: string[] }> {
    const map = await this.#router.map();
    return { version: map.version, shards: [...map.shards] };
  }

  /** The shard whose rows of the partition are current (its map's, followed along a move). */
  async shardOf(table: string, partitionKey: string): Promise<string> {
    return (
      (await this.#router.readableShard(table, partitionKey)) ?? this.#router.ownerOf(table, partitionKey)
    );
  }

  /**
   * Adds a shard and moves online the partitions the new map places on it (about 1/n of them): see
   * docs/sharding.md. Re-running it after a crash resumes the move it finds in the directory.
   */
  async addShard(name: string, shard: TableStore, options: AddShardOptions = {}): Promise<ReshardResult> {
    if (name in this.#shards && this.#shards[name] !== shard) {
      throw new ValidationError("shard", `a different store is already the shard '${name}'`);
    }
    checkSameCapabilities(this.#shards[this.shardNames[0] as string] as TableStore, name, shard);
    if (this.blobs !== undefined && shard.blobs === undefined) {
      throw new ValidationError(
        "shard",
        `shard '${name}' has no blob endpoint, which the other shards' large values need`,
      );
    }
    this.#shards[name] = shard;
    return this.#addShard(name, undefined, options.onProgress);
  }

  #addShard(name: string, takeOver: string | undefined, onProgress?: AddShardOptions["onProgress"]) {
    return addShardOnline({
      name,
      shards: this.#shards,
      router: this.#router,
      directory: this.#directory,
      onProgress,
      sleep: this.#sleep,
      takeOver,
    });
  }

  /**
   * `db.repair()`'s part: resumes (rolls forward) a move `addShard` recorded in the directory and did
   * not finish, once its mover has not stamped it for `minIntentAgeMs` (each step stamps it). The new
   * shard must be one of this store's shards. Resolves `{ resumed, pending, partitions, rows }`:
   * `pending` counts a move left alone because its mover stamped it more recently.
   */
  async repair(
    options: StoreRepairOptions = { minIntentAgeMs: 0 },
  ): Promise<Readonly<Record<string, number>>> {
    const counts = { resumed: 0, pending: 0, partitions: 0, rows: 0 };
    const move = await this.#directory.pendingMove();
    if (move === undefined) return counts;
    if (Date.now() - move.stampedAt < options.minIntentAgeMs) return { ...counts, pending: 1 };
    if (!(move.shard in this.#shards)) {
      throw new StoreError(
        `the shard directory records an unfinished move to shard '${move.shard}', which this ShardedStore was not given; give it (shards: { …, ${move.shard} }) so repair can finish the move`,
        { serviceCode: "ShardMissing" },
      );
    }
    try {
      const result = await this.#addShard(move.shard, move.etag);
      return { ...counts, resumed: 1, partitions: result.partitions, rows: result.rows };
    } catch (error) {
      // Another process took the move over first (its repair, or the mover itself): that one finishes it.
      if (error instanceof ConcurrencyError) return { ...counts, pending: 1 };
      throw error;
    }
  }

  async createTable(table: string): Promise<void> {
    await Promise.all(Object.values(this.#shards).map((s) => s.createTable(table)));
  }

  async deleteTable(table: string): Promise<void> {
    await Promise.all(Object.values(this.#shards).map((s) => s.deleteTable(table)));
  }

  async listTables(prefix?: string): Promise<string[]> {
    const lists = await Promise.all(Object.values(this.#shards).map((s) => s.listTables(prefix)));
    const byKey = new Map<string, string>();
    const caseSensitive = this.capabilities.limits?.caseSensitiveTableNames ?? false;
    for (const name of lists.flat()) {
      if (name === DIRECTORY_TABLE) continue;
      const key = caseSensitive ? name : name.toLowerCase();
      if (!byKey.has(key)) byKey.set(key, name);
    }
    return [...byKey.values()].sort();
  }

  async getEntity(
    table: string,
    partitionKey: string,
    rowKey: string,
    select?: readonly string[],
    types?: PropertyTypes,
  ): Promise<StoredEntity | undefined> {
    if (isMarkerRow(rowKey)) return undefined;
    return this.#router.read(
      table,
      partitionKey,
      (s) => s.getEntity(table, partitionKey, rowKey, select, types),
      (row) => row === undefined,
    );
  }

  async queryPage(table: string, query: StoreQuery): Promise<StorePage> {
    const partitionKey = singlePartitionOf(query.filter);
    if (partitionKey === undefined) {
      return queryAcrossShards(this.#router, this.shardNames, table, query, this.capabilities.sortedResults);
    }
    const select = withKeys(query.select);
    const page = await this.#router.read(
      table,
      partitionKey,
      (s) => s.queryPage(table, { ...query, select }),
      () => true,
    );
    const items = page.items
      .filter((row) => !isMarkerRow(row.rowKey))
      .map((row) => stripKeys(row, query.select));
    return page.continuation === undefined ? { items } : { items, continuation: page.continuation };
  }

  async insert(table: string, entity: WireEntity): Promise<WriteResult> {
    return this.#single(table, entity.partitionKey, entity.rowKey, { kind: "insert", entity });
  }

  async upsert(table: string, entity: WireEntity, mode: WriteMode): Promise<WriteResult> {
    return this.#single(table, entity.partitionKey, entity.rowKey, { kind: "upsert", entity, mode });
  }

  async update(table: string, entity: WireEntity, mode: WriteMode, ifMatch: string): Promise<WriteResult> {
    return this.#single(table, entity.partitionKey, entity.rowKey, { kind: "update", entity, mode, ifMatch });
  }

  async delete(table: string, partitionKey: string, rowKey: string, ifMatch: string): Promise<boolean> {
    return deletedUnlessAbsent(() =>
      this.#single(table, partitionKey, rowKey, { kind: "delete", partitionKey, rowKey, ifMatch }),
    );
  }

  async submitTransaction(
    table: string,
    partitionKey: string,
    actions: readonly TransactionAction[],
  ): Promise<WriteResult[]> {
    for (const action of actions) {
      const rowKey = action.kind === "delete" ? action.rowKey : action.entity.rowKey;
      refuseMarkerKey(rowKey);
    }
    return this.#router.write(table, partitionKey, actions);
  }

  /** One write as a fenced transaction of one action, its failure told as the single request's would be. */
  async #single(
    table: string,
    partitionKey: string,
    rowKey: string,
    action: TransactionAction,
  ): Promise<WriteResult> {
    refuseMarkerKey(rowKey);
    try {
      const [result] = await this.#router.write(table, partitionKey, [action]);
      return result as WriteResult;
    } catch (error) {
      if (!(error instanceof TransactionError) || error.index !== 0) throw error;
      const keys = { table, partitionKey, rowKey };
      if (error.statusCode === 409) throw new EntityAlreadyExistsError(keys, { cause: error });
      if (error.statusCode === 412) throw new ConcurrencyError(keys, { cause: error });
      if (error.statusCode === 404 && error.serviceCode !== "TableNotFound") {
        throw new EntityNotFoundError(keys, { cause: error });
      }
      // A failure the store raised for the action itself (a limit, a bad value), as sent alone.
      if (error.cause instanceof TableKitError && !(error.cause instanceof TransactionError))
        throw error.cause;
      throw new StoreError(error.message, {
        statusCode: error.statusCode,
        serviceCode: error.serviceCode,
        cause: error,
      });
    }
  }
}

function refuseMarkerKey(rowKey: string): void {
  if (isMarkerRow(rowKey)) {
    throw new ValidationError(
      "reserved-key",
      `RowKeys starting with '~tablekit~shard~' are kept by ShardedStore`,
    );
  }
}

/** Shards must answer alike (limits, ordering): a Cosmos DB shard beside Table storage ones is refused. */
function checkSameCapabilities(first: TableStore, name: string, shard: TableStore): void {
  const a = describeCapabilities(first);
  const b = describeCapabilities(shard);
  if (a !== b) {
    throw new SchemaError(
      `shard '${name}' differs in capabilities from the others (${b} vs ${a}); every shard must be the same kind of backend`,
    );
  }
}

/** What must match between shards: ordering and limits (each account's own URL aside). */
function describeCapabilities(store: TableStore): string {
  const { sortedResults, limits } = store.capabilities;
  const { accountUrl: _url, ...rules } = limits ?? {};
  return JSON.stringify({ sortedResults, limits: rules });
}
