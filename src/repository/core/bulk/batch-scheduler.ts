import type { PlannedBatch } from "./batch-planner.js";
import type { BulkProgress, BulkResult, FailedBatch, SubmitBatch, SubmitOutcome } from "./bulk-types.js";

/** How a `BatchScheduler` runs. */
export interface BatchSchedulerOptions {
  concurrency: number;
  stopOnError: boolean;
  onProgress?: ((progress: BulkProgress) => void) | undefined;
  total?: number | undefined;
}

/**
 * Submits planned batches with at most `concurrency` in flight, never two of one partition at once
 * (concurrent EGTs on the same entities slow each other, and a later write of an entity must land after
 * an earlier one), each partition's batches in the order they were planned; it tallies the outcome.
 */
export class BatchScheduler<T> {
  readonly #submit: SubmitBatch;
  readonly #options: BatchSchedulerOptions;
  /** Closed batches not yet submitted, per partition, in planned order; a partition leaves when its queue empties. */
  readonly #queues = new Map<string, PlannedBatch<T>[]>();
  /** Partitions with a batch in flight. */
  readonly #busy = new Set<string>();
  #waiters: (() => void)[] = [];
  #queuedUnits = 0;
  #halted = false;
  #written = 0;
  #batches = 0;
  #retries = 0;
  #failedUnits = 0;
  readonly #failed: FailedBatch<T>[] = [];

  constructor(submit: SubmitBatch, options: BatchSchedulerOptions) {
    this.#submit = submit;
    this.#options = options;
  }

  /** Units in batches waiting for their turn. */
  get queuedUnits(): number {
    return this.#queuedUnits;
  }

  /** Batches in flight. */
  get inFlight(): number {
    return this.#busy.size;
  }

  /** True once no new batch may start (abort, or a failure under `stopOnError`). */
  get halted(): boolean {
    return this.#halted;
  }

  /** True when another batch could start now. */
  get hasFreeSlot(): boolean {
    return !this.#halted && this.#busy.size < this.#options.concurrency;
  }

  /** True when the partition has no batch in flight or waiting, so a new batch of it would start at once. */
  isIdle(partitionKey: string): boolean {
    return !this.#busy.has(partitionKey) && !this.#queues.has(partitionKey);
  }

  /** Queues a batch behind the earlier ones of its partition and starts whatever may start. */
  enqueue(batch: PlannedBatch<T>): void {
    const queue = this.#queues.get(batch.partitionKey);
    if (queue) queue.push(batch);
    else this.#queues.set(batch.partitionKey, [batch]);
    this.#queuedUnits += batch.units.length;
    this.#pump();
  }

  /** Starts no new batch from now on; batches in flight still settle. */
  halt(): void {
    this.#halted = true;
    this.#wakeWaiters();
  }

  /** Resolves when a batch settles or the scheduler halts; at once when nothing is in flight. */
  settled(): Promise<void> {
    if (this.#busy.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Resolves when nothing is in flight and, unless halted, nothing is waiting. */
  async drain(): Promise<void> {
    while (this.#busy.size > 0 || (!this.#halted && this.#queuedUnits > 0)) await this.settled();
  }

  /** The tally so far. */
  result(): BulkResult<T> {
    return {
      written: this.#written,
      batches: this.#batches,
      retries: this.#retries,
      failed: [...this.#failed],
    };
  }

  #pump(): void {
    if (!this.hasFreeSlot) return;
    for (const [partitionKey, queue] of this.#queues) {
      if (this.#busy.has(partitionKey)) continue;
      const batch = queue.shift()!;
      if (queue.length === 0) this.#queues.delete(partitionKey);
      this.#start(batch);
      if (!this.hasFreeSlot) return;
    }
  }

  #start(batch: PlannedBatch<T>): void {
    this.#busy.add(batch.partitionKey);
    this.#queuedUnits -= batch.units.length;
    let pending: Promise<SubmitOutcome>;
    try {
      pending = Promise.resolve(this.#submit(batch.partitionKey, batch.actions));
    } catch (error) {
      pending = Promise.reject(error);
    }
    // Both handlers are total (they never throw), so the chain can never end in an unhandled rejection.
    pending.then(
      (outcome) => this.#settle(batch, undefined, outcome),
      (error: unknown) => this.#settle(batch, { error }, undefined),
    );
  }

  #settle(
    batch: PlannedBatch<T>,
    failure: { error: unknown } | undefined,
    outcome: SubmitOutcome | undefined,
  ): void {
    this.#busy.delete(batch.partitionKey);
    this.#batches += outcome?.transactions ?? 1;
    if (failure) {
      this.#failedUnits += batch.units.length;
      this.#failed.push({
        partitionKey: batch.partitionKey,
        items: batch.units.map((unit) => unit.item),
        error: failure.error,
      });
      if (this.#options.stopOnError) this.#halted = true;
    } else {
      // A batch sent as several transactions may have failed in part: those units are listed alone.
      let failedUnits = 0;
      for (const part of outcome?.failed ?? []) {
        failedUnits += part.units.length;
        this.#failed.push({
          partitionKey: batch.partitionKey,
          items: part.units.map((at) => (batch.units[at] as (typeof batch.units)[number]).item),
          error: part.error,
        });
      }
      this.#failedUnits += failedUnits;
      if (failedUnits > 0 && this.#options.stopOnError) this.#halted = true;
      this.#written += batch.units.length - failedUnits;
      const retries = outcome?.retries;
      if (typeof retries === "number" && Number.isFinite(retries)) this.#retries += retries;
    }
    this.#report();
    this.#pump();
    this.#wakeWaiters();
  }

  #report(): void {
    const onProgress = this.#options.onProgress;
    if (!onProgress) return;
    const progress: BulkProgress = {
      done: this.#written,
      batches: this.#batches,
      retries: this.#retries,
      failed: this.#failedUnits,
    };
    if (this.#options.total !== undefined) progress.total = this.#options.total;
    try {
      onProgress(progress);
    } catch {
      // Progress reporting must not change the outcome of the writes.
    }
  }

  #wakeWaiters(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
