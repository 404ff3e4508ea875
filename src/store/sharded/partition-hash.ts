/**
 * Placement of a partition on a shard: a stable 64-bit hash of (table, PartitionKey) fed to jump
 * consistent hashing (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm", 2014).
 * Jump hashing maps a key to one of `n` buckets so that going from `n - 1` to `n` buckets moves
 * only about `1/n` of the keys, all of them into the new bucket: adding the n-th shard moves a
 * partition only from an old shard to the new one, never between old shards.
 */

const MASK_64 = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;

/** FNV-1a over the UTF-8 bytes, then SplitMix64's finaliser so that near keys spread over all bits. */
export function stableHash64(text: string): bigint {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, "utf8")) {
    hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  }
  hash = ((hash ^ (hash >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  hash = ((hash ^ (hash >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return hash ^ (hash >> 31n);
}

/** Jump consistent hash: the bucket in `[0, buckets)` of a 64-bit key. */
export function jumpConsistentHash(key: bigint, buckets: number): number {
  let k = key & MASK_64;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = (k * 2862933555777941757n + 1n) & MASK_64;
    j = Math.floor((b + 1) * (2 ** 31 / (Number(k >> 33n) + 1)));
  }
  return b;
}

/**
 * The hash key of a partition. Table names are compared case-insensitively by Table storage, so
 * `Users` and `users` are one table and must place a partition alike (not on a case-sensitive backend).
 */
export function partitionHashKey(table: string, partitionKey: string, caseSensitiveTables: boolean): bigint {
  const name = caseSensitiveTables ? table : table.toLowerCase();
  return stableHash64(`${name}\u0000${partitionKey}`);
}
