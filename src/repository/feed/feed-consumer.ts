import { ValidationError } from "../../errors.js";
import { mapBounded } from "../../query/bounded-map.js";
import { assertValidKey } from "../../util/key-rules.js";
import type { FeedPartition } from "../pipeline/feed/feed-directory.js";
import type { ChangeFeedConsumeOptions, ChangeFeedConsumer, ChangeFeedPage } from "./change.js";
import type { FeedDeps } from "./feed-deps.js";
import { GroupLeases } from "./feed-leases.js";
import { slotOf } from "./feed-slots.js";

export { FEED_GROUPS_TABLE, FEED_LEASE_MS } from "./feed-leases.js";

const DEFAULT_BATCH = 100;
const DEFAULT_POLL_MS = 1000;
/** Held slots read at once (each reads up to 8 partitions at once). */
const SLOT_READS = 4;

/** What a consumer reads: the feed's partitions, and a page of some of them after a position. */
export interface FeedSource<T> {
  partitions(): Promise<FeedPartition[]>;
  read(partitions: FeedPartition[], from: string | undefined, limit: number): Promise<ChangeFeedPage<T>>;
}

/**
 * Runs a consumer of one group. The feed's partitions are split into lease slots (feed-slots.ts);
 * each round the consumer balances its leases (feed-leases.ts: its fair share of the slots, taken
 * over from consumers whose leases ran out by the context's clock), then for each slot it holds reads
 * a batch after the slot's checkpoint, hands it to the handler and, once the handler resolves, stores
 * the position after it in the slot's row, conditional on the ETag of its lease: a consumer that lost
 * the slot meanwhile moves nothing (the batch is delivered again: at least once).
 */
export function startConsumer<T>(
  logical: string,
  options: ChangeFeedConsumeOptions<T>,
  deps: FeedDeps,
  source: FeedSource<T>,
): ChangeFeedConsumer {
  const group = options.group;
  if (typeof group !== "string" || group === "" || group.length > 255) {
    throw new ValidationError("feed-group", "group must be a string of 1 to 255 characters");
  }
  // The group is part of its rows' PartitionKey: the service's key rules apply.
  assertValidKey("RowKey", group, "group");
  if (typeof options.handler !== "function")
    throw new ValidationError("feed-handler", "handler must be a function");
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > 1000) {
    throw new ValidationError(
      "feed-batch",
      `batchSize must be a whole number from 1 to 1000, got ${String(batchSize)}`,
    );
  }
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  if (!Number.isFinite(pollMs) || pollMs < 0) {
    throw new ValidationError("feed-poll", `pollIntervalMs must be 0 or more, got ${String(pollMs)}`);
  }
  const stopping = new AbortController();
  if (options.signal?.aborted) stopping.abort();
  options.signal?.addEventListener("abort", () => stopping.abort(), { once: true });
  const leases = new GroupLeases(logical, group, deps);
  const pause = () => deps.sleep(pollMs, stopping.signal).catch(() => undefined);

  /** Handles one batch of a slot; `true` when it had changes (handled or not). */
  const handleSlot = async (slot: number, page: ChangeFeedPage<T>) => {
    if (page.changes.length === 0 || stopping.signal.aborted) return false;
    try {
      await options.handler(page.changes);
    } catch (error) {
      // Not checkpointed: the same changes come again next round.
      deps.runner.emit({
        type: "warning",
        code: "change-feed-handler",
        message: `change feed group '${group}': the handler threw (${error instanceof Error ? error.message : String(error)}); its batch is delivered again`,
      });
      return false;
    }
    await leases.checkpoint(slot, page.next);
    return true;
  };

  const run = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      const held = await leases.balance();
      let busy = false;
      if (held.size > 0) {
        const bySlot = new Map<number, FeedPartition[]>();
        for (const partition of await source.partitions()) {
          const slot = slotOf(partition);
          if (held.has(slot)) bySlot.set(slot, [...(bySlot.get(slot) ?? []), partition]);
        }
        // The held slots' batches are read at once; the handler still gets them one at a time.
        const slots = [...bySlot.entries()];
        const pages = await mapBounded(slots, SLOT_READS, ([slot, partitions]) =>
          source.read(partitions, held.get(slot), batchSize),
        );
        for (const [index, [slot]] of slots.entries()) {
          if (stopping.signal.aborted) break;
          if (await handleSlot(slot, pages[index] as ChangeFeedPage<T>)) busy = true;
        }
      }
      if (!busy) await pause();
    }
  };
  const done = run().finally(() => leases.release());
  // What ended a consumer is its `done`'s to report; unobserved, it must not crash the process.
  done.catch(() => undefined);
  return {
    stop: async () => {
      stopping.abort();
      await done.catch(() => undefined);
    },
    done,
  };
}
