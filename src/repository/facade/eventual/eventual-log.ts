import { randomBytes } from "node:crypto";
import { ConcurrencyError, EntityNotFoundError, StoreError, ValidationError } from "../../../errors.js";
import type { StoredEntity, WireEntity } from "../../../store/table-store.js";
import { INTENTS_TABLE } from "../../core/intent-log.js";
import { intentShardRows } from "../../core/intent-shards.js";
import type { Requests, TableNaming } from "../../core/requests.js";
import type { RecordedStep } from "./recorded-step.js";

/**
 * Eventual transactions live in the intents table beside index intents, under partitions no
 * entity type produces (index intents use `<type>~<shard>`), spread over a few shards.
 */
const PARTITION_PREFIX = "~eventually~";
const SHARDS = 8;
/** The partition where intents that failed too often are kept for inspection. */
export const EVENTUAL_POISON_PARTITION = "poison~~eventually";
/** A property holds at most 64 KiB (32K UTF-16 units): the payload is split into parts below that. */
const PART_CHARS = 30_000;
/** The whole row stays under the service's 1 MiB entity limit (2 bytes per UTF-16 unit, plus headroom). */
export const MAX_PAYLOAD_CHARS = 480_000;

/** One recorded eventual transaction as read back. */
export interface EventualIntent {
  partitionKey: string;
  rowKey: string;
  etag: string;
  steps: RecordedStep[];
  attempts: number;
  /** Until when a repairer holds the claim (0: unclaimed). */
  leaseUntil: number;
}

/** Encodes the steps as JSON parts; `ValidationError` (before any request) when the set is too large for one row. */
export function payloadOf(steps: readonly RecordedStep[]): string[] {
  const json = JSON.stringify(steps);
  if (json.length > MAX_PAYLOAD_CHARS) {
    throw new ValidationError(
      "eventual-size",
      `an eventual transaction is recorded as one intent row (under 1 MiB): these ${steps.length} steps need about ${json.length * 2} bytes, the limit is ${MAX_PAYLOAD_CHARS * 2}; split the work into several transactions`,
    );
  }
  const parts: string[] = [];
  for (let at = 0; at < json.length; at += PART_CHARS) parts.push(json.slice(at, at + PART_CHARS));
  return parts;
}

/** A partition for a new intent: one of the shards, at random. */
export function intentShard(): string {
  return `${PARTITION_PREFIX}${(randomBytes(1)[0] as number) % SHARDS}`;
}

/** The intent log's eventual-transaction rows: record, list, claim, remove. */
export class EventualLog {
  readonly #runner: Requests;
  readonly #table: string;

  constructor(runner: Requests & TableNaming) {
    this.#runner = runner;
    this.#table = runner.tableName(INTENTS_TABLE);
  }

  /** The physical intents table. */
  get table(): string {
    return this.#table;
  }

  /**
   * Records the steps as one row in `partitionKey` (an `intentShard()`), creating the intents table on
   * first use; resolves the intent.
   */
  async record(
    parts: readonly string[],
    steps: RecordedStep[],
    now: number,
    partitionKey: string,
  ): Promise<EventualIntent> {
    const row: WireEntity = {
      partitionKey,
      // Time-ordered ids: repair replays older intents first.
      rowKey: `${now.toString().padStart(15, "0")}_${randomBytes(6).toString("hex")}`,
      kind: "eventually",
      steps: steps.length,
      parts: parts.length,
      attempts: 0,
      leaseUntil: new Date(0),
    };
    parts.forEach((part, i) => {
      row[`p${i}`] = part;
    });
    const table = this.#table;
    // An upsert, not an insert: the id is random, and a retry after a lost answer must not fail on our own row.
    const write = () => this.#runner.run("recordIntent", table, (s) => s.upsert(table, row, "replace"));
    let etag: string;
    try {
      ({ etag } = await write());
    } catch (error) {
      if (!(error instanceof StoreError && error.statusCode === 404)) throw error;
      await this.#runner.run("createTable", table, (s) => s.createTable(table));
      ({ etag } = await write());
    }
    return { partitionKey: row.partitionKey, rowKey: row.rowKey, etag, steps, attempts: 0, leaseUntil: 0 };
  }

  /** Every recorded eventual transaction, oldest first within each shard (nothing when the table does not exist). */
  async *pending(): AsyncIterable<EventualIntent> {
    const log = { table: this.#table, prefix: PARTITION_PREFIX, shards: SHARDS, missingTableIsEmpty: true };
    for await (const row of intentShardRows(this.#runner, log)) yield parseIntent(row);
  }

  /**
   * Claims an intent for one repairer until `leaseUntil`: a conditional update on the ETag it was
   * read with. Resolves the claimed intent, or `undefined` when another repairer (or the writer's
   * removal) got there first.
   */
  async claim(intent: EventualIntent, leaseUntil: number): Promise<EventualIntent | undefined> {
    const table = this.#table;
    const attempts = intent.attempts + 1;
    try {
      const { etag } = await this.#runner.run("claimIntent", table, (s) =>
        s.update(
          table,
          {
            partitionKey: intent.partitionKey,
            rowKey: intent.rowKey,
            attempts,
            leaseUntil: new Date(leaseUntil),
          },
          "merge",
          intent.etag,
        ),
      );
      return { ...intent, etag, attempts, leaseUntil };
    } catch (error) {
      // A retry whose first attempt claimed it meets its own claim as a 412: skipping is safe (the lease expires).
      if (error instanceof ConcurrencyError || error instanceof EntityNotFoundError) return undefined;
      throw error;
    }
  }

  /** Removes a finished intent; with an ETag, only if no other repairer claimed it since. */
  async complete(intent: EventualIntent, ifMatch = "*"): Promise<void> {
    const table = this.#table;
    try {
      await this.#runner.run("completeIntent", table, (s) =>
        s.delete(table, intent.partitionKey, intent.rowKey, ifMatch),
      );
    } catch (error) {
      if (!(error instanceof ConcurrencyError || error instanceof EntityNotFoundError)) throw error;
    }
  }

  /** Moves an intent that failed too often to the poison partition (written there first, then removed). */
  async setAside(intent: EventualIntent, reason: string): Promise<void> {
    const table = this.#table;
    const row: WireEntity = {
      partitionKey: EVENTUAL_POISON_PARTITION,
      rowKey: intent.rowKey,
      kind: "eventually",
      steps: intent.steps.length,
      attempts: intent.attempts,
      shard: intent.partitionKey,
      error: reason.slice(0, 4000),
    };
    payloadOf(intent.steps).forEach((part, i) => {
      row[`p${i}`] = part;
    });
    row.parts = Object.keys(row).filter((name) => /^p\d+$/.test(name)).length;
    await this.#runner.run("poisonIntent", table, (s) => s.upsert(table, row, "replace"));
    await this.complete(intent, intent.etag);
  }
}

function parseIntent(row: StoredEntity): EventualIntent {
  const parts = typeof row.parts === "number" ? row.parts : 0;
  let json = "";
  for (let i = 0; i < parts; i++) json += String(row[`p${i}`] ?? "");
  const lease = row.leaseUntil;
  return {
    partitionKey: row.partitionKey,
    rowKey: row.rowKey,
    etag: row.etag,
    steps: json === "" ? [] : (JSON.parse(json) as RecordedStep[]),
    attempts: typeof row.attempts === "number" ? row.attempts : 0,
    leaseUntil: lease instanceof Date ? lease.getTime() : 0,
  };
}

/** When an intent was recorded: its RowKey starts with the time in milliseconds. */
export function recordedAt(intent: { rowKey: string }): number {
  const time = Number(intent.rowKey.slice(0, intent.rowKey.indexOf("_")));
  return Number.isFinite(time) ? time : 0;
}
