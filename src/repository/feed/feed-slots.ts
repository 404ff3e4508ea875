import type { FeedPartition } from "../pipeline/feed/feed-directory.js";

/**
 * How many lease slots a consumer group's work is split into: each partition of the feed belongs to
 * one slot (by a hash of its name), and each slot is leased and checkpointed on its own, so up to
 * this many consumers of one group share the work.
 */
export const FEED_LEASE_SLOTS = 16;

/**
 * The slot a partition's changes are leased in: FNV-1a of its PartitionKey, the same in every process
 * (a period's tables put a PartitionKey in the same slot).
 */
export function slotOf(partition: Pick<FeedPartition, "partitionKey">): number {
  const text = partition.partitionKey;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % FEED_LEASE_SLOTS;
}
