/** The sharded store: partitions spread over several stores (accounts) by consistent hashing. */

export type { ReshardProgress, ReshardResult } from "./shard-mover.js";
export { type AddShardOptions, ShardedStore, type ShardedStoreOptions } from "./sharded-store.js";
