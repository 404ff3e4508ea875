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
  const settings = consumerSettings(options);
  const stopping = new AbortController();
  if (options.signal?.aborted) stopping.abort();
  options.signal?.addEventListener("abort", () => stopping.abort(), { once: true });
  const leases = new GroupLeases(logical, settings.group, deps);
  const loop = new ConsumerLoop(options, settings, deps, source, leases, stopping.signal);
  const done = loop.run().finally(() => leases.release());
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

/** A consumer's checked options. */
interface ConsumerSettings {
  readonly group: string;
  readonly batchSize: number;
  readonly pollMs: number;
}

/** The group, batch size and poll interval, checked in that order (a `ValidationError` before anything runs). */
function consumerSettings<T>(options: ChangeFeedConsumeOptions<T>): ConsumerSettings {
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
  return { group, batchSize, pollMs };
}

/** The rounds of one consumer, until its stop signal: balance leases, read the held slots, hand out batches. */
class ConsumerLoop<T> {
  readonly #options: ChangeFeedConsumeOptions<T>;
  readonly #settings: ConsumerSettings;
  readonly #deps: FeedDeps;
  readonly #source: FeedSource<T>;
  readonly #leases: GroupLeases;
  readonly #stopping: AbortSignal;

  constructor(
    options: ChangeFeedConsumeOptions<T>,
    settings: ConsumerSettings,
    deps: FeedDeps,
    source: FeedSource<T>,
    leases: GroupLeases,
    stopping: AbortSignal,
  ) {
    this.#options = options;
    this.#settings = settings;
    this.#deps = deps;
    this.#source = source;
    this.#leases = leases;
    this.#stopping = stopping;
  }

  /** Rounds until stopped; a round that handed out nothing waits the poll interval (or the stop) first. */
  async run(): Promise<void> {
    const stopping = this.#stopping;
    while (!stopping.aborted) {
      const held = await this.#leases.balance();
      let busy = false;
      if (held.size > 0) {
        const slots = heldSlots(await this.#source.partitions(), held);
        // The held slots' batches are read at once; the handler still gets them one at a time.
        const pages = await mapBounded(slots, SLOT_READS, ([slot, partitions]) =>
          this.#source.read(partitions, held.get(slot), this.#settings.batchSize),
        );
        for (const [index, [slot]] of slots.entries()) {
          if (stopping.aborted) break;
          if (await this.#handleSlot(slot, pages[index] as ChangeFeedPage<T>)) busy = true;
        }
      }
      if (!busy) await this.#pause();
    }
  }

  #pause(): Promise<void> {
    return this.#deps.sleep(this.#settings.pollMs, this.#stopping).catch(() => undefined);
  }

  /** Handles one batch of a slot; `true` when it had changes (handled or not). */
  async #handleSlot(slot: number, page: ChangeFeedPage<T>): Promise<boolean> {
    if (page.changes.length === 0 || this.#stopping.aborted) return false;
    try {
      await this.#options.handler(page.changes);
    } catch (error) {
      // Not checkpointed: the same changes come again next round.
      this.#deps.runner.emit({
        type: "warning",
        code: "change-feed-handler",
        message: `change feed group '${this.#settings.group}': the handler threw (${error instanceof Error ? error.message : String(error)}); its batch is delivered again`,
      });
      return false;
    }
    await this.#leases.checkpoint(slot, page.next);
    return true;
  }
}

/** The feed's partitions of the held slots, by slot. */
function heldSlots(
  partitions: readonly FeedPartition[],
  held: ReadonlyMap<number, string | undefined>,
): [number, FeedPartition[]][] {
  const bySlot = new Map<number, FeedPartition[]>();
  for (const partition of partitions) {
    const slot = slotOf(partition);
    if (held.has(slot)) bySlot.set(slot, [...(bySlot.get(slot) ?? []), partition]);
  }
  return [...bySlot.entries()];
}
