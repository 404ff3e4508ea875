/** One committed write of a change-fed entity, as `db.changes(Entity)` returns it. */
export interface Change<T> {
  /** `upsert` for an insert, upsert, update or mutate (the whole entity); `merge` for a merge or patch; `delete`. */
  kind: "upsert" | "merge" | "delete";
  key: { partitionKey: string; rowKey: string };
  /**
   * The whole entity after the write (kind `upsert`). Absent when the copy could not ride in the
   * write's transaction (see docs/change-feed.md: large values, rows near the service's limits).
   */
  entity?: T;
  /** The columns a merge or patch wrote (kind `merge`), absent as `entity` is. */
  changes?: Partial<T>;
  /** 1 for the entity's first write, then one more per committed write (deletes included). */
  version: number;
  /** When the write was made, by the context's clock. */
  at: Date;
  /** `"ttl"` for a delete made by an expiry sweep. */
  reason?: "ttl";
  /** The position right after this change: `read({ from: change.position })` continues after it. */
  position: string;
}

/** Options of `ChangeFeed.read`. */
export interface ChangeFeedReadOptions {
  /** A position from an earlier `next` or `change.position`; omitted: the oldest retained change. */
  from?: string | undefined;
  /** At most this many changes (1 to 1,000; default 1,000). */
  limit?: number | undefined;
}

/** A page of changes and the position after it (the same position when the page is empty). */
export interface ChangeFeedPage<T> {
  changes: Change<T>[];
  next: string;
}

/** Options of `ChangeFeed.consume`. */
export interface ChangeFeedConsumeOptions<T> {
  /** The consumer group: its checkpoint and lease are kept in the account, apart from other groups'. */
  group: string;
  /** Handles a batch; the checkpoint advances only after it resolves (a throw gets the same batch again). */
  handler: (changes: Change<T>[]) => Promise<void> | void;
  /** Changes per batch (1 to 1,000; default 100). */
  batchSize?: number | undefined;
  /** Wait between polls when nothing is new, or while another consumer holds the lease (default 1,000 ms). */
  pollIntervalMs?: number | undefined;
  /** Stops the consumer when aborted (as `stop()` does). */
  signal?: AbortSignal | undefined;
}

/** A running consumer: `stop()` ends it after the batch in hand; `done` settles when it has ended. */
export interface ChangeFeedConsumer {
  /** Stops the consumer (after the batch in hand, checkpointed if its handler resolved) and gives its lease up. */
  stop(): Promise<void>;
  /** Settles when the consumer has ended: resolves after `stop()` or an abort, rejects with what ended it otherwise. */
  done: Promise<void>;
}
