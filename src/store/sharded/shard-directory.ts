import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError, StoreError } from "../../errors.js";
import type { StoredEntity, TableStore } from "../table-store.js";
import { initialShardMap, type ShardMap } from "./shard-map.js";

/** The table, on the directory shard, that holds the shard map and the move in progress. */
export const DIRECTORY_TABLE = "TablekitShardMap";
const PARTITION = "map";
const MAP_ROW = "current";
const MOVE_ROW = "move";

/** A move begun by `addShard` and not yet finished: the map it leads to. */
export interface PendingMove {
  readonly shard: string;
  readonly target: ShardMap;
}

/** A recorded move as read: its ETag (the claim a mover holds) and when its mover last stamped it. */
export interface RecordedMove extends PendingMove {
  readonly etag: string;
  /** `Date.now()` of the mover's last step (0 for a record written before movers stamped it). */
  readonly stampedAt: number;
}

/** The shard map as stored, with the ETag that guards its next change. */
export interface StoredShardMap {
  readonly map: ShardMap;
  readonly etag: string;
}

/**
 * The shard map kept in one table of the directory shard, so every process routes alike. It is read
 * when a store first routes and again only on a miss (a partition found nowhere it looked), never on
 * every request; changes are conditional on the row's ETag, so two writers cannot both publish.
 */
export class ShardDirectory {
  readonly #store: TableStore;
  readonly #names: readonly string[];

  constructor(store: TableStore, names: readonly string[]) {
    this.#store = store;
    this.#names = names;
  }

  /** The stored map; the first read of a new directory stores the initial map of the configured shards. */
  async read(): Promise<StoredShardMap> {
    const row = await this.#readRow(MAP_ROW);
    if (row !== undefined) return { map: parseMap(row), etag: row.etag };
    const map = initialShardMap(this.#names);
    await this.#store.createTable(DIRECTORY_TABLE);
    try {
      const { etag } = await this.#store.insert(DIRECTORY_TABLE, mapRow(map));
      return { map, etag };
    } catch (error) {
      // Another process stored the first map meanwhile: use its.
      if (!(error instanceof EntityAlreadyExistsError)) throw error;
      return this.read();
    }
  }

  /** Replaces the map if it is still the one read (`ConcurrencyError` otherwise). */
  async publish(map: ShardMap, etag: string): Promise<void> {
    await this.#store.update(DIRECTORY_TABLE, mapRow(map), "replace", etag);
  }

  /** The move in progress, if any. */
  async pendingMove(): Promise<RecordedMove | undefined> {
    const row = await this.#readRow(MOVE_ROW);
    if (row === undefined) return undefined;
    const stampedAt = typeof row.stampedAt === "number" ? row.stampedAt : 0;
    return { shard: String(row.shard), target: parseMap(row), etag: row.etag, stampedAt };
  }

  /**
   * Records a move before its first step, so a crash leaves it to be resumed, and resolves the claim
   * (the record's ETag) its mover holds. With `takeOver` (the ETag of the record read), the record is
   * replaced only if no other process stamped it since: of two processes resuming one move, one wins
   * and the other gets `ConcurrencyError`.
   */
  async beginMove(move: PendingMove, takeOver?: string): Promise<string> {
    await this.#store.createTable(DIRECTORY_TABLE);
    if (takeOver !== undefined) return this.stampMove(move, takeOver);
    const { etag } = await this.#store.upsert(DIRECTORY_TABLE, moveRow(move), "replace");
    return etag;
  }

  /**
   * Stamps the move's record with the time of a step, conditionally on the mover's claim; resolves the
   * new claim. A mover whose record another process took over (`db.repair()` resuming a move that
   * looked abandoned) stops here with `StoreError` `ShardMoveTakenOver`.
   */
  async stampMove(move: PendingMove, claim: string): Promise<string> {
    try {
      const { etag } = await this.#store.update(DIRECTORY_TABLE, moveRow(move), "replace", claim);
      return etag;
    } catch (error) {
      if (!(error instanceof ConcurrencyError) && !(error instanceof EntityNotFoundError)) throw error;
      throw new StoreError(`another process took over the move that adds shard '${move.shard}'`, {
        statusCode: 409,
        serviceCode: "ShardMoveTakenOver",
        cause: error,
      });
    }
  }

  /** Forgets the move once it is done (conditionally on the mover's claim). */
  async endMove(claim: string): Promise<void> {
    await this.#store.delete(DIRECTORY_TABLE, PARTITION, MOVE_ROW, claim);
  }

  async #readRow(rowKey: string): Promise<StoredEntity | undefined> {
    try {
      return await this.#store.getEntity(DIRECTORY_TABLE, PARTITION, rowKey);
    } catch (error) {
      if (error instanceof StoreError && error.statusCode === 404) return undefined;
      throw error;
    }
  }
}

function mapRow(map: ShardMap) {
  return {
    partitionKey: PARTITION,
    rowKey: MAP_ROW,
    version: map.version,
    shards: JSON.stringify(map.shards),
  };
}

function moveRow(move: PendingMove) {
  return { ...mapRow(move.target), rowKey: MOVE_ROW, shard: move.shard, stampedAt: Date.now() };
}

function parseMap(row: StoredEntity): ShardMap {
  const shards: unknown = JSON.parse(String(row.shards));
  if (!Array.isArray(shards) || typeof row.version !== "number") {
    throw new StoreError(`the shard map in table ${DIRECTORY_TABLE} is not one tablekit wrote`, {});
  }
  return { version: row.version, shards: shards.map(String) };
}
