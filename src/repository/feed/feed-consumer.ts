import { randomUUID } from "node:crypto";
import { ConcurrencyError, EntityAlreadyExistsError, ValidationError } from "../../errors.js";
import type { StoredEntity } from "../../store/table-store.js";
import { assertValidKey } from "../../util/key-rules.js";
import { isTableNotFound } from "../pipeline/period-table-store.js";
import type { ChangeFeedConsumeOptions, ChangeFeedConsumer, ChangeFeedPage } from "./change.js";
import type { FeedDeps } from "./feed-deps.js";

/** tablekit's table of consumer groups: one row per group (PartitionKey: the entity's table, RowKey: the group). */
export const FEED_GROUPS_TABLE = "TablekitFeedGroups";
/** How long a consumer holds its group's lease without renewing it; a consumer that dies is taken over after it. */
export const FEED_LEASE_MS = 30_000;
const DEFAULT_BATCH = 100;
const DEFAULT_POLL_MS = 1000;

/**
 * Runs a consumer of one group: it takes the group's lease (a row updated conditionally on its
 * ETag, so one consumer of the group holds it at a time; the others wait and take over once it has
 * not been renewed for `FEED_LEASE_MS` by the context's clock), reads a batch after the group's
 * checkpoint, hands it to the handler and, once the handler resolves, stores the position after it
 * in the same row, conditional on the ETag of its lease: a consumer that lost its lease meanwhile
 * moves nothing (the batch is delivered again: at least once).
 */
export function startConsumer<T>(
  logical: string,
  options: ChangeFeedConsumeOptions<T>,
  deps: FeedDeps,
  read: (from: string | undefined, limit: number) => Promise<ChangeFeedPage<T>>,
): ChangeFeedConsumer {
  const group = options.group;
  if (typeof group !== "string" || group === "" || group.length > 255) {
    throw new ValidationError("feed-group", "group must be a string of 1 to 255 characters");
  }
  // The group is its row's RowKey: the service's key rules apply.
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
  const lease = new GroupLease(logical, group, deps);
  const pause = () => deps.sleep(pollMs, stopping.signal).catch(() => undefined);

  const run = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      const held = await lease.acquire();
      if (held === undefined) {
        await pause();
        continue;
      }
      const page = await read(positionOf(held), batchSize);
      if (page.changes.length === 0 || stopping.signal.aborted) {
        await pause();
        continue;
      }
      try {
        await options.handler(page.changes);
      } catch (error) {
        // Not checkpointed: the same changes come again after the pause.
        deps.runner.emit({
          type: "warning",
          code: "change-feed-handler",
          message: `change feed group '${group}': the handler threw (${error instanceof Error ? error.message : String(error)}); its batch is delivered again`,
        });
        await pause();
        continue;
      }
      await lease.checkpoint(page.next);
    }
  };
  const done = run().finally(() => lease.release());
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

function positionOf(row: StoredEntity): string | undefined {
  const position = row.Position;
  return typeof position === "string" && position !== "" ? position : undefined;
}

/** A group's row: its checkpoint (`Position`) and its lease (`Owner`, `LeaseUntil` in ms of the context's clock). */
class GroupLease {
  readonly #table: string;
  readonly #partitionKey: string;
  readonly #group: string;
  readonly #deps: FeedDeps;
  readonly #owner = randomUUID();
  #held: StoredEntity | undefined;

  constructor(logical: string, group: string, deps: FeedDeps) {
    this.#table = deps.runner.tableName(FEED_GROUPS_TABLE);
    this.#partitionKey = logical;
    this.#group = group;
    this.#deps = deps;
  }

  /** The group's row once this consumer holds its lease (renewed); `undefined` while another consumer holds it. */
  async acquire(): Promise<StoredEntity | undefined> {
    const { runner } = this.#deps;
    const table = this.#table;
    let row = await this.#get();
    const until = runner.now() + FEED_LEASE_MS;
    const lease = {
      partitionKey: this.#partitionKey,
      rowKey: this.#group,
      Owner: this.#owner,
      LeaseUntil: until,
    };
    try {
      if (row === undefined) {
        const { etag } = await runner.run("createEntity", table, (s) =>
          s.insert(table, { ...lease, Position: "" }),
        );
        row = { ...lease, Position: "", etag };
      } else {
        const leaseUntil = typeof row.LeaseUntil === "number" ? row.LeaseUntil : 0;
        if (row.Owner !== this.#owner && leaseUntil > runner.now()) return this.#drop();
        const { etag } = await runner.run("updateEntity", table, (s) =>
          s.update(table, lease, "merge", row?.etag ?? "*"),
        );
        row = { ...row, ...lease, etag };
      }
    } catch (error) {
      if (error instanceof ConcurrencyError || error instanceof EntityAlreadyExistsError) return this.#drop();
      throw error;
    }
    this.#held = row;
    return row;
  }

  /** Stores the position after a handled batch, if this consumer still holds the lease. */
  async checkpoint(position: string): Promise<void> {
    const held = this.#held;
    if (held === undefined) return;
    const { runner } = this.#deps;
    const table = this.#table;
    const row = {
      partitionKey: this.#partitionKey,
      rowKey: this.#group,
      Position: position,
      Owner: this.#owner,
      LeaseUntil: runner.now() + FEED_LEASE_MS,
    };
    try {
      const { etag } = await runner.run("updateEntity", table, (s) =>
        s.update(table, row, "merge", held.etag),
      );
      this.#held = { ...held, ...row, etag };
    } catch (error) {
      // The lease was taken over: the other consumer delivers the batch again.
      if (!(error instanceof ConcurrencyError)) throw error;
      this.#held = undefined;
    }
  }

  /** Gives the lease up (so another consumer takes over at once); failures leave it to expire. */
  async release(): Promise<void> {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    const table = this.#table;
    const row = { partitionKey: this.#partitionKey, rowKey: this.#group, LeaseUntil: 0 };
    await this.#deps.runner
      .run("updateEntity", table, (s) => s.update(table, row, "merge", held.etag))
      .catch(() => undefined);
  }

  #drop(): undefined {
    this.#held = undefined;
    return undefined;
  }

  async #get(): Promise<StoredEntity | undefined> {
    const { runner } = this.#deps;
    const table = this.#table;
    try {
      return await runner.run("getEntity", table, (s) => s.getEntity(table, this.#partitionKey, this.#group));
    } catch (error) {
      if (
        !isTableNotFound(error) &&
        !(error instanceof Error && "statusCode" in error && error.statusCode === 404)
      )
        throw error;
      await runner.run("createTable", table, (s) => s.createTable(table));
      return undefined;
    }
  }
}
