import { jumpConsistentHash, partitionHashKey } from "./partition-hash.js";

/**
 * Which shards exist and in what order they were added: a partition's shard is bucket
 * `jump(hash(table, PartitionKey), shards.length)` of this list, so the list only ever grows at its
 * end (a shard's position is its bucket). `version` grows by one with every change.
 */
export interface ShardMap {
  readonly version: number;
  readonly shards: readonly string[];
}

/** The first map of a set of shards: version 1, the names in ascending order. */
export function initialShardMap(names: readonly string[]): ShardMap {
  return { version: 1, shards: [...names].sort() };
}

/** The shard `map` places the partition on. */
export function placeOf(
  map: ShardMap,
  table: string,
  partitionKey: string,
  caseSensitiveTables: boolean,
): string {
  const bucket = jumpConsistentHash(
    partitionHashKey(table, partitionKey, caseSensitiveTables),
    map.shards.length,
  );
  return map.shards[bucket] as string;
}

/** The map with `shard` added at its end. */
export function withShard(map: ShardMap, shard: string): ShardMap {
  return { version: map.version + 1, shards: [...map.shards, shard] };
}
