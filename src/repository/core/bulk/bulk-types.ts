import type { TransactionAction, WriteMode } from "../../../store/table-store.js";

/** One user entity, already converted to its transaction actions (its own plus same-partition index copies). */
export interface WriteUnit<T> {
  item: T;
  partitionKey: string;
  /** Every action carries `partitionKey`; they always travel in the same batch. */
  actions: TransactionAction[];
  /** Row keys this unit touches. */
  rowKeys: string[];
  /**
   * What the unit adds to its transaction beyond `actions`, estimated when it is packed: the copies
   * and list rows of an indexed entity in its partition, planned only when its batch is sent.
   */
  extra?: { operations: number; bytes: number } | undefined;
}

/** How a bulk write runs. */
export interface BulkOptions {
  /** Batches in flight at once, over all partitions (default 8); one partition never has two. */
  concurrency?: number | undefined;
  /** Called after each batch settles; a throwing callback is ignored. */
  onProgress?: ((progress: BulkProgress) => void) | undefined;
  /** Stops pulling and sending; in-flight batches settle, then the bulk write rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * After the first failed batch, start no new batch and resolve once in-flight ones settle (default false);
   * units pulled but not yet sent are then neither `written` nor in `failed`.
   */
  stopOnError?: boolean | undefined;
  /** Units held in memory before partial batches are sent to make room (default 10,000). */
  maxBufferedUnits?: number | undefined;
}

/** A snapshot of a bulk write's progress, in units (entities) and batches. */
export interface BulkProgress {
  /** Units whose batch committed. */
  done: number;
  /** Units expected in all, when known. */
  total?: number;
  /** Batches settled (committed or failed). */
  batches: number;
  /** Retries reported by the committed batches. */
  retries: number;
  /** Units whose batch failed. */
  failed: number;
}

/** A batch the store rejected: nothing of it was written. */
export interface FailedBatch<T> {
  partitionKey: string;
  items: T[];
  error: unknown;
}

/** What a bulk write did: each batch is atomic, the bulk write as a whole is not. */
export interface BulkResult<T> {
  /** Units (entities, not actions) committed. */
  written: number;
  /** Batches settled (committed or failed). */
  batches: number;
  /** Retries reported by the committed batches. */
  retries: number;
  failed: FailedBatch<T>[];
}

/**
 * What sending a batch did: the retries it took; when it went as several transactions (its plan did
 * not fit one), how many, and the units (positions in the batch) of the ones that failed.
 */
export interface SubmitOutcome {
  retries: number;
  transactions?: number;
  failed?: Array<{ units: number[]; error: unknown }>;
}

/** Sends one planned batch (one entity group transaction, or more when its plan needs them). */
export type SubmitBatch = (partitionKey: string, actions: TransactionAction[]) => Promise<SubmitOutcome>;

/** How an entity class writes many entities (its batches planned by `runBulk`). */
export interface BulkWriter<T> {
  /** Inserts many; see `Repository.bulkInsert`. */
  bulkInsert(items: Iterable<T> | AsyncIterable<T>, options: BulkOptions): Promise<BulkResult<T>>;
  /** Upserts many; see `Repository.bulkUpsert`. */
  bulkUpsert(
    items: Iterable<T> | AsyncIterable<T>,
    mode: WriteMode,
    options: BulkOptions,
  ): Promise<BulkResult<T>>;
  /** Deletes many by key; see `Repository.bulkDelete`. */
  bulkDelete(
    keys: Iterable<Partial<T>> | AsyncIterable<Partial<T>>,
    options: BulkOptions,
  ): Promise<BulkResult<Partial<T>>>;
}
