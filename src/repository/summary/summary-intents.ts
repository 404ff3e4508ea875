import { randomBytes } from "node:crypto";
import { EntityNotFoundError, StoreError } from "../../errors.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { INTENTS_TABLE } from "../core/intent-log.js";
import { intentShardRows } from "../core/intent-shards.js";
import type { Requests, TableNaming } from "../core/requests.js";

/**
 * Remote-summary intents live in the intents table beside index intents and eventual transactions,
 * under partitions no entity type produces (index intents use `<type>~<shard>`), spread over shards.
 */
const PARTITION_PREFIX = "~summary~";
const SHARDS = 8;

/** One source partition whose remote summaries may be behind its local rows. */
export interface SummaryIntent {
  partitionKey: string;
  rowKey: string;
  /** The entity's logical table (the class is found by it and `type`). */
  table: string;
  type: string;
  /** The source partition whose local summary rows are mirrored (for a table per period, `<period table>~<PartitionKey>`: see `summarySource`). */
  sourcePartitionKey: string;
}

/**
 * The durable "mirror pending" record of a write to an entity with remote summaries: written before
 * the write's transaction, removed after its contributions are mirrored. One per write (a random
 * id), never shared: a writer removing its own intent cannot drop another writer's pending work.
 * What survives a crash is exactly the source partitions to mirror again, so repair reads a handful
 * of intent partitions, never the entity's table.
 */
export class SummaryIntents {
  readonly #runner: Requests;
  readonly #table: string;

  constructor(runner: Requests & TableNaming) {
    this.#runner = runner;
    this.#table = runner.tableName(INTENTS_TABLE);
  }

  /** Records the intent (creating the intents table on first use). */
  async record(type: string, table: string, sourcePartitionKey: string, now: number): Promise<SummaryIntent> {
    const intent: SummaryIntent = {
      partitionKey: `${PARTITION_PREFIX}${(randomBytes(1)[0] as number) % SHARDS}`,
      // Time-ordered ids: repair mirrors older intents first, and can leave young ones alone.
      rowKey: `${now.toString().padStart(15, "0")}_${randomBytes(6).toString("hex")}`,
      table,
      type,
      sourcePartitionKey,
    };
    const row: WireEntity = { ...intent, kind: "summary" };
    const intents = this.#table;
    // An upsert, not an insert: the id is random, and a retry after a lost answer must not fail on our own row.
    const write = () => this.#runner.run("recordIntent", intents, (s) => s.upsert(intents, row, "replace"));
    try {
      await write();
    } catch (error) {
      if (!(error instanceof StoreError && error.statusCode === 404)) throw error;
      await this.#runner.run("createTable", intents, (s) => s.createTable(intents));
      await write();
    }
    return intent;
  }

  /** Removes a finished intent (idempotent). */
  async complete(intent: SummaryIntent): Promise<void> {
    const intents = this.#table;
    try {
      await this.#runner.run("completeIntent", intents, (s) =>
        s.delete(intents, intent.partitionKey, intent.rowKey, "*"),
      );
    } catch (error) {
      if (!(error instanceof EntityNotFoundError)) throw error;
    }
  }

  /** Every pending intent, oldest first within each shard (nothing when the intents table does not exist). */
  async *pending(): AsyncIterable<SummaryIntent> {
    const log = { table: this.#table, prefix: PARTITION_PREFIX, shards: SHARDS, missingTableIsEmpty: true };
    for await (const row of intentShardRows(this.#runner, log)) yield parseIntent(row);
  }
}

function parseIntent(row: StoredEntity): SummaryIntent {
  return {
    partitionKey: row.partitionKey,
    rowKey: row.rowKey,
    table: String(row.table),
    type: String(row.type),
    sourcePartitionKey: String(row.sourcePartitionKey),
  };
}

/** When an intent was recorded: its RowKey starts with the time in milliseconds. */
export function summaryIntentAge(intent: SummaryIntent, now: number): number {
  const time = Number(intent.rowKey.slice(0, intent.rowKey.indexOf("_")));
  return Number.isFinite(time) ? now - time : Number.POSITIVE_INFINITY;
}
