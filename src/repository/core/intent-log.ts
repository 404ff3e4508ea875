import { randomBytes } from "node:crypto";
import { type CopyRef, decodeCopyRefs, encodeCopyRefs } from "./copy-ref.js";
import { intentShardRows } from "./intent-shards.js";
import type { Clock, Requests, TableNaming } from "./requests.js";

/** The table holding unfinished cross-partition index work (the eventually-consistent-transactions pattern). */
export const INTENTS_TABLE = "TablekitIntents";

/** Intents spread over a few partitions per entity type so no single partition gets hot. */
const SHARDS = 8;

/** Durable record of index work that must finish for one entity write. */
export interface Intent {
  partitionKey: string;
  rowKey: string;
  /** The entity's physical table and keys. */
  table: string;
  sourcePartitionKey: string;
  sourceRowKey: string;
  /** Every remote copy that may exist after the write, old and new: replay keeps those derived from the entity and deletes the rest. */
  refs: CopyRef[];
  attempts: number;
}

/**
 * The intent log: written before an entity write that touches copies in other partitions or
 * tables, deleted after the copies are in place. What survives a crash is exactly the unfinished
 * work, so repair reads only the intents (a handful of partition queries), never the whole table.
 */
export class IntentLog {
  readonly #runner: Requests & Clock;
  readonly #table: string;

  constructor(runner: Requests & TableNaming & Clock) {
    this.#runner = runner;
    this.#table = runner.tableName(INTENTS_TABLE);
  }

  /** The physical intents table (created by `ensureTables` for entities with remote indexes). */
  get table(): string {
    return this.#table;
  }

  /** Records the intent; resolves its id. */
  async record(
    type: string,
    table: string,
    partitionKey: string,
    rowKey: string,
    refs: readonly CopyRef[],
  ): Promise<Intent> {
    const intent: Intent = {
      partitionKey: `${type}~${shardOf(partitionKey, rowKey)}`,
      // Time-ordered ids: repair replays older intents first.
      rowKey: `${this.#runner.now().toString().padStart(15, "0")}_${randomBytes(6).toString("hex")}`,
      table,
      sourcePartitionKey: partitionKey,
      sourceRowKey: rowKey,
      refs: [...refs],
      attempts: 0,
    };
    // An upsert, not an insert: the id is random, and a retry after a lost response must not fail on our own row.
    await this.#runner.run("recordIntent", this.#table, (s) =>
      s.upsert(
        this.#table,
        {
          partitionKey: intent.partitionKey,
          rowKey: intent.rowKey,
          table,
          sourcePartitionKey: partitionKey,
          sourceRowKey: rowKey,
          refs: encodeCopyRefs(refs),
          attempts: 0,
        },
        "replace",
      ),
    );
    return intent;
  }

  /** Removes a finished intent (idempotent). */
  async complete(intent: Intent): Promise<void> {
    await this.#runner.run("completeIntent", this.#table, (s) =>
      s.delete(this.#table, intent.partitionKey, intent.rowKey, "*"),
    );
  }

  /** Counts a failed replay, so poison intents can be set aside. */
  async recordAttempt(intent: Intent): Promise<void> {
    await this.#runner.run("retryIntent", this.#table, (s) =>
      s.update(
        this.#table,
        { partitionKey: intent.partitionKey, rowKey: intent.rowKey, attempts: intent.attempts + 1 },
        "merge",
        "*",
      ),
    );
  }

  /** Every unfinished intent of an entity type, oldest first within each shard. */
  async *pending(type: string): AsyncIterable<Intent> {
    const log = { table: this.#table, prefix: `${type}~`, shards: SHARDS, missingTableIsEmpty: false };
    for await (const row of intentShardRows(this.#runner, log)) {
      yield {
        partitionKey: row.partitionKey,
        rowKey: row.rowKey,
        table: String(row.table),
        sourcePartitionKey: String(row.sourcePartitionKey),
        sourceRowKey: String(row.sourceRowKey),
        refs: decodeCopyRefs(row.refs) ?? [],
        attempts: typeof row.attempts === "number" ? row.attempts : 0,
      };
    }
  }
}

function shardOf(partitionKey: string, rowKey: string): number {
  let hash = 0;
  const text = `${partitionKey}\u0000${rowKey}`;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return Math.abs(hash) % SHARDS;
}
